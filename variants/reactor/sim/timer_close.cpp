// SPDX-License-Identifier: MIT
// timer_close — a seeded concurrency bug in reactor code, measured three ways
// (docs/testing-schedules.md, "Measured: real runs against seeds").
//
// The bug: a timer racing a close. A connection's handlers are meant to run on its strand. The
// reply arrives from a timer handler, which checks that the connection is open and posts the
// write to the strand; the idle timeout, due at the same moment, closes the connection — but
// from a timer handler too, not on the strand. When the close runs between the reply's check and
// its write, the write goes to a closed connection.
//
// The command line is pools/sim/measure.hpp's: no argument prints the table row (1,000 runs on a
// pools::reactor::per_thread_executor of 2 threads, seeds 1..1,000 of each strategy); --real N;
// --explore STRATEGY [--seeds N] (POOLS_SIM_SEED=N replays a seed).
#include <pools/reactor/executor.hpp>
#include <pools/reactor/simulated.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/reactor/timer.hpp>
#include <pools/sim/measure.hpp>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
namespace pr = pools::reactor;

struct connection {
  std::atomic<bool> open{true};  // atomic: on the real executor the timers run on two threads
  std::atomic<int> written{0};
  std::atomic<int> written_after_close{0};
};

// User code, written once against "an executor": unqualified post(strand, f) is
// boost::asio::post on the real reactor and pools::reactor::post on the simulated one.
template <class Executor>
void serve(Executor& ex, connection& c) {
  auto strand = make_strand(ex);
  post_after(ex, 1ms, [&c] { c.open = false; });  // the idle timeout: NOT on the strand
  post_after(ex, 1ms, [&c, strand] {              // the reply arrives
    if (c.open) {                                 // check ...
      post(strand, [&c] {                         // ... then act, later, on the strand
        if (!c.open) c.written_after_close.fetch_add(1);
        c.written.fetch_add(1);
      });
    }
  });
}

void simulated_program(pools::sim::scheduler& s) {
  pr::simulated ex(s);
  connection c;
  serve(ex, c);
  s.run();
  if (c.written_after_close != 0) throw std::runtime_error("a reply was written to a closed connection");
}

}  // namespace

int main(int argc, char** argv) {
  return pools::sim::measure_main(argc, argv,
                                  {"reactor: timer_close",
                                   [] {
                                     pr::per_thread_executor ex(2);
                                     connection c;
                                     serve(ex, c);
                                     ex.stop();  // drains: both timers and the write have run
                                     return c.written_after_close != 0;
                                   },
                                   simulated_program});
}
