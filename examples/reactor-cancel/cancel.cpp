// SPDX-License-Identifier: MIT
// example_reactor_cancel — Asio's cancellation slots on the reactor (pools/reactor/cancellation.hpp),
// driven by a std::stop_token as the rest of the project cancels:
//
//   1. a 10 s timer wait, stopped from the main thread after 50 ms: it ends at once, with
//      operation_aborted, and the executor is free to stop;
//   2. a 20 ms wait that completes first: a stop after the completion changes nothing;
//   3. a chain on a strand (a tick every 10 ms, each started by the previous one's handler with
//      the same slot), stopped after 55 ms: the tick in flight ends with operation_aborted and no
//      tick starts after it (a stop that lands just after a tick fired cancels nothing: the
//      handler's own check of the token ends the chain then);
//   4. a step posted to the strand and cancelled before it ran: its work never runs.
//
// Run: build/examples/reactor-cancel/example_reactor_cancel  (exit 0 and "all as expected")
#include <pools/reactor/cancellation.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace reactor = pools::reactor;
using namespace std::chrono_literals;
using error_code = boost::system::error_code;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

const char* what(const error_code& ec) {
  return ec == asio::error::operation_aborted ? "operation_aborted" : ec ? "error" : "success";
}

int failures = 0;
void expect(bool ok, const char* claim) {
  if (!ok) {
    std::printf("  NOT AS EXPECTED: %s\n", claim);
    ++failures;
  }
}

/// A wait of `d` on `strand`, cancelled through `stop`; returns its error code once it has ended.
struct wait_result {
  error_code ec;
  double after_ms = 0;
};
wait_result wait_stopped_after(reactor::executor& ex, std::chrono::milliseconds d, std::stop_source& stop,
                               std::chrono::milliseconds stop_after) {
  const auto strand = reactor::make_strand(ex);
  pools::wait_group done(1);
  wait_result r;
  const auto start = clock_type::now();
  asio::post(strand, [&] {
    // stop_signal: the token's stop callback posts an emit to the strand, where the wait runs.
    auto signal = std::make_shared<reactor::stop_signal>(stop.get_token(), strand);
    reactor::async_wait_for(strand, d,
                            reactor::bind_cancellation_slot(signal->slot(), [&, signal](error_code ec) {
                              r = {ec, ms_since(start)};
                              done.done();
                            }));
  });
  std::this_thread::sleep_for(stop_after);
  stop.request_stop();  // from this thread: not the strand's
  done.wait();
  return r;
}

}  // namespace

int main() {
  reactor::executor ex(2, reactor::strategy::per_thread);

  {
    std::stop_source stop;
    const auto r = wait_stopped_after(ex, 10s, stop, 50ms);
    std::printf("1. wait 10 s, stop after 50 ms      -> %s after %.1f ms\n", what(r.ec), r.after_ms);
    expect(r.ec == asio::error::operation_aborted && r.after_ms < 5000, "the 10 s wait ended at the stop");
  }
  {
    std::stop_source stop;
    const auto r = wait_stopped_after(ex, 20ms, stop, 300ms);
    std::printf("2. wait 20 ms, stop after 300 ms    -> %s after %.1f ms (the stop came later: no-op)\n",
                what(r.ec), r.after_ms);
    expect(!r.ec && r.after_ms >= 20, "the 20 ms wait completed on its own");
  }
  {
    const auto strand = reactor::make_strand(ex);
    std::stop_source stop;
    auto signal = std::make_shared<reactor::stop_signal>(stop.get_token(), strand);
    std::atomic<int> ticks{0};
    pools::wait_group ended(1);
    error_code last;
    const auto start = clock_type::now();
    std::function<void()> tick = [&] {
      reactor::async_wait_for(strand, 10ms,
                              reactor::bind_cancellation_slot(signal->slot(), [&](error_code ec) {
                                if (ec || signal->stop_requested()) {  // aborted, or stopped since it fired
                                  last = ec;
                                  return ended.done();
                                }
                                ticks.fetch_add(1);
                                tick();  // the next step, on the same slot
                              }));
    };
    asio::post(strand, tick);
    std::this_thread::sleep_for(55ms);
    stop.request_stop();
    ended.wait();
    const int seen = ticks.load();
    std::printf("3. chain of 10 ms ticks, stop at 55 ms -> %d ticks, then %s after %.1f ms\n", seen,
                last ? what(last) : "the handler's token check", ms_since(start));
    std::this_thread::sleep_for(30ms);
    expect(ticks.load() == seen, "no tick after the stop");
  }
  {
    const auto strand = reactor::make_strand(ex);
    reactor::cancellation_signal cancel;
    pools::wait_group done(1);
    bool worked = false;
    error_code ec_seen;
    asio::post(strand, [&] {
      reactor::async_post(
          strand, [&] { worked = true; }, reactor::bind_cancellation_slot(cancel.slot(), [&](error_code ec) {
            ec_seen = ec;
            done.done();
          }));
      cancel.emit(reactor::cancellation_type::terminal);  // on the strand, before the step ran
    });
    done.wait();
    std::printf("4. step posted, cancelled before it ran -> %s, its work %s\n", what(ec_seen),
                worked ? "ran" : "never ran");
    expect(ec_seen == asio::error::operation_aborted && !worked, "the cancelled step did not run");
  }
  ex.stop();
  if (failures != 0) {
    std::printf("%d not as expected\n", failures);
    return 1;
  }
  std::printf("all as expected\n");
  return 0;
}
