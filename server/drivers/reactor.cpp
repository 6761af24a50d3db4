// SPDX-License-Identifier: MIT
// server_reactor — the HTTP server on pools::reactor: completion callbacks on Asio io_contexts.
// How it waits: it does not. Every read, write, timer and job ends in a callback that calls
// pump() again; between callbacks a connection is only the state its pending handlers own.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the executor (--strategy per_thread | shared), a pools::server::listener on a
//                strand of it; this thread only waits for the listener, then drains the executor
//   session   -> the connection loop in callbacks (pools::server::callback_session), on a strand
//   run_job   -> fib: continuation-passing fork-join; busy: a handler on any thread; sleep: a
//                timer on the session's strand; each ends in finish(), so a connection's jobs
//                run at once. busy reads job.stop; sleep's timer is cancelled through an Asio
//                cancellation slot that the stop token emits (reactor::stop_signal)
//
// Each session lives on its own strand (reactor::make_strand: under per_thread its io_context's
// executor, free; under shared an asio::strand), so its handlers never run concurrently. It is
// owned by its pending handlers (callback_session) and counted (reactor::counted: /stats shows
// pool.sessions_alive, which must fall back to the connections still open once clients go).
#include <pools/reactor/cancellation.hpp>
#include <pools/reactor/counted.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/server/callback_session.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <atomic>
#include <functional>
#include <memory>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace reactor = pools::reactor;
using tcp = asio::ip::tcp;

/// fib(n) in continuation-passing style: a handler cannot wait for its children (that would hold
/// a reactor thread), so a fork leaves a join counter on the heap and the child that brings it to
/// zero runs the continuation `k` with the sum.
void fib_cps(reactor::executor& ex, std::uint64_t n, std::function<void(std::uint64_t)> k) {
  if (n < srv::fib_cutoff) return k(srv::fib_serial(n));
  struct join {
    std::atomic<int> left{2};
    std::uint64_t a = 0, b = 0;
    std::function<void(std::uint64_t)> k;
  };
  auto j = std::make_shared<join>();
  j->k = std::move(k);
  auto arrive = [](const std::shared_ptr<join>& j) {  // acq_rel: the last sees the other's write
    if (j->left.fetch_sub(1, std::memory_order_acq_rel) == 1) j->k(j->a + j->b);
  };
  ex.post([&ex, n, j, arrive] {
    fib_cps(ex, n - 1, [j, arrive](std::uint64_t v) {
      j->a = v;
      arrive(j);
    });
  });
  fib_cps(ex, n - 2, [j, arrive](std::uint64_t v) {
    j->b = v;
    arrive(j);
  });
}

class session : public srv::callback_session, public reactor::counted<session> {
 public:
  session(tcp::socket socket, srv::app& app, reactor::executor& ex)
      : callback_session(std::move(socket), app), ex_(ex) {}

 private:
  // A job runs on whichever reactor thread it lands on; finish() hops back to the strand.
  // A job still queued when its session was dropped (the shutdown deadline) is skipped: the
  // drain would otherwise wait for work nobody will read.
  void run_job(srv::job job) override {
    auto self = shared_from_this();
    auto done = [self, job](std::uint64_t value) { self->finish(job, value); };
    switch (job.what) {
      case srv::job::kind::fib:
        ex_.post([this, self, job, done] {
          if (!self->abandoned()) fib_cps(ex_, job.arg, done);
        });
        break;
      case srv::job::kind::busy:
        ex_.post([self, job, done] {
          if (self->abandoned()) return;
          srv::busy_wait(job.duration(), job.stop);  // returns early if the client leaves
          done(0);
        });
        break;
      case srv::job::kind::sleep: {
        // The client leaving stops job.stop; stop_signal turns that into an emit on this strand,
        // and the wait ends with operation_aborted. The handler owns the signal: it outlives the wait.
        auto stop = std::make_shared<reactor::stop_signal>(job.stop, executor());
        reactor::async_wait_for(executor(), job.duration(),
                                reactor::bind_cancellation_slot(
                                    stop->slot(), [stop, done](boost::system::error_code) { done(0); }));
        break;
      }
      case srv::job::kind::respond:
        done(0);
        break;
    }
  }

  reactor::executor& ex_;
};

void serve(srv::app& app) {
  const auto strategy = reactor::parse_strategy(app.opts().strategy).value_or(reactor::strategy::per_thread);
  reactor::executor ex(app.opts().threads, strategy);
  app.set_pool_stats([&] {
    return std::vector<srv::pool_stat>{{"threads", ex.concurrency()},
                                       {"io_contexts", ex.context_count()},
                                       {"sessions_alive", static_cast<std::uint64_t>(session::live())}};
  });
  // The acceptor and the signals share one strand, and each connection gets a strand of its own.
  srv::listener listener(
      app, reactor::make_strand(ex),
      [&](tcp::socket socket) { return std::make_shared<session>(std::move(socket), app, ex); },
      [&] { return reactor::make_strand(ex); });
  listener.wait();  // this thread only waits: the reactor's threads run everything
  ex.stop();        // drains: dropped sessions close, jobs in flight end
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = "reactor",
                   .summary = "callbacks on Asio io_contexts (pools::reactor), per_thread or shared",
                   .strategies = {"per_thread", "shared"}},
                  argc, argv, serve);
}
