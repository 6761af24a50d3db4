// SPDX-License-Identifier: MIT
// server_fibers — the HTTP server on pools::fibers: one fiber per connection.
// How it waits: blocking-style read() and write() that suspend the fiber (never its worker). The
// connection loop is straight-line code; a suspended connection is a fiber stack.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, whose idle workers run the sockets (worker_io), a listener on this thread
//   session   -> the loop in the fiber: next() -> run / read / write / half_close / wait / close
//   run_job   -> a fiber of its own: fib with spawn/join, busy on the worker, sleep with sleep_for;
//                busy and sleep end early when the client leaves (job.stop)
//
// Every socket call is made on the worker that owns the socket (pools::server::suspending_session):
// an idle worker waits in its io_context, and a completion fulfils the fiber's promise, which
// makes the fiber runnable on that worker's own deque. Each job is a fiber of its own, so a
// connection's pipelined jobs run concurrently; the loop joins them oldest first, the order in
// which their responses must go out.
#include <pools/fibers/future.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/main.hpp>
#include <pools/server/suspending_session.hpp>
#include <pools/server/work.hpp>
#include <pools/server/worker_io.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <stop_token>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace pf = pools::fibers;
using tcp = asio::ip::tcp;

std::uint64_t fib(pf::thread_pool& pool, std::uint64_t n) {
  if (n < srv::fib_cutoff) return srv::fib_serial(n);
  auto left = pool.spawn([&pool, n] { return fib(pool, n - 1); });
  const std::uint64_t right = fib(pool, n - 2);
  return left.join() + right;
}

/// this_fiber::sleep_for that ends early when `stop` is requested: the stop callback fulfils a
/// promise that the fiber waits on with a deadline (from any thread: that only makes the fiber
/// runnable).
void sleep_for(std::chrono::milliseconds d, const std::stop_token& stop) {
  pf::promise<void> woken;
  auto wake_up = woken.get_future();
  {
    std::stop_callback on_stop(stop, [&woken] { woken.set_value(); });
    if (wake_up.wait_for(d) == std::future_status::ready) return;  // stopped
  }  // the callback is gone, or has run: no second set_value
  // Not stopped: fulfil it here, or ~promise would store a broken_promise (an allocation).
  if (wake_up.wait_for(std::chrono::seconds(0)) != std::future_status::ready) woken.set_value();
}

class session : public srv::suspending_session {
 public:
  session(tcp::socket socket, srv::app& app, pf::thread_pool& pool)
      : suspending_session(std::move(socket)), app_(app), pool_(pool) {}

  // The listener calls this on its thread.
  void start() override {
    pool_.post([self = std::static_pointer_cast<session>(shared_from_this())] { self->pump(); });
  }

 private:
  struct in_flight {
    srv::job job;
    pf::join_handle<std::uint64_t> result;
  };

  /// One socket operation, on the fiber's stack until the socket's worker fulfils `done`.
  struct io_op final : operation {
    using operation::operation;
    pf::promise<void> done;
    // The promise moves out first: once it is fulfilled the fiber may return and free the op.
    void resume() override { pf::promise<void>(std::move(done)).set_value(); }
  };

  io_result io(op_kind kind, std::span<char> in = {}, std::span<const char> out = {},
               time_point deadline = time_point::max()) {
    io_op op(kind, in, out, deadline);
    auto done = op.done.get_future();
    post(op);
    done.get();  // suspends the fiber
    return op.result;
  }

  // The connection loop, as straight-line code: each io() suspends the fiber until the I/O ends.
  void pump() {
    srv::connection conn(app_, peer());
    // The jobs started and not yet joined, oldest first. Should the loop end with some still
    // running (a write failed), their handles join them on the way out: they use this session.
    std::deque<in_flight> jobs;
    for (bool open = true; open;) {
      if (take_stop()) conn.shutdown();  // no read is in flight here
      switch (conn.next()) {
        case srv::action::run: {
          const srv::job job = conn.take_job();
          jobs.push_back({job, pool_.spawn([this, job] { return run_job(job); })});
          break;
        }
        case srv::action::read: {
          auto r = io(op_kind::read, conn.read_buffer(), {}, conn.deadline());
          if (r.stopped && take_stop() && !conn.shutdown() && r.ec)  // mid-request: read on
            r = io(op_kind::read, conn.read_buffer(), {}, conn.deadline());
          if (r.expired) conn.expire();
          if (r.ec)
            conn.end_of_input();
          else
            conn.commit(r.n);
          break;
        }
        case srv::action::write: {
          auto r = io(op_kind::write, {}, conn.output(), conn.deadline());
          if (r.expired) conn.expire();
          if (r.ec)
            open = false;
          else
            conn.consume(r.n);
          break;
        }
        case srv::action::half_close:
          io(op_kind::half_close);
          break;
        case srv::action::wait: {  // only jobs can be in flight: I/O is awaited in place
          watch_peer(conn);        // the client leaving stops them (job.stop)
          // The oldest job's response is the next to go out: later ones wait for it anyway.
          in_flight oldest = std::move(jobs.front());
          jobs.pop_front();
          std::uint64_t value = 0;
          try {
            value = oldest.result.join();  // suspends this fiber only
          } catch (const std::exception& e) {
            conn.fail(oldest.job, e.what());
            break;
          }
          conn.complete(oldest.job, value);
          break;
        }
        case srv::action::close:
          open = false;
          break;
      }
    }
    io(op_kind::close);
  }

  // In a fiber of its own: a blocking job blocks only that fiber. An exception reaches join().
  std::uint64_t run_job(const srv::job& job) {
    switch (job.what) {
      case srv::job::kind::fib:
        return fib(pool_, job.arg);
      case srv::job::kind::busy:
        srv::busy_wait(job.duration(), job.stop);
        break;
      case srv::job::kind::sleep:
        sleep_for(job.duration(), job.stop);
        break;
      case srv::job::kind::respond:
        break;
    }
    return 0;
  }

  srv::app& app_;
  pf::thread_pool& pool_;
};

void serve(srv::app& app) {
  asio::io_context control(1);            // the acceptor and the signals: this thread
  srv::worker_io io(app.opts().threads);  // the sockets: one io_context per worker
  pf::thread_pool pool(
      pf::pool_options{.threads = app.opts().threads, .park_hook = &io});  // idle workers wait in io
  app.set_pool_stats([&] {
    const auto st = pool.stats();
    return std::vector<srv::pool_stat>{{"threads", pool.concurrency()},
                                       {"fibers_created", st.fibers_created},
                                       {"fibers_alive", st.fibers_alive}};
  });
  srv::listener listener(
      app, control.get_executor(),
      [&](tcp::socket socket) { return std::make_shared<session>(std::move(socket), app, pool); },
      [&] { return io.next_executor(); });
  control.run();    // the acceptor and the signals, until the listener needs them no more:
  listener.wait();  // after a second signal that is before the last session has closed
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run(
      {.name = "fibers", .summary = "one fiber per connection (pools::fibers), blocking-style Asio I/O"},
      argc, argv, serve);
}
