// SPDX-License-Identifier: MIT
// server_coroutines — the HTTP server on pools::coroutines: one coroutine per connection.
// How it waits: `co_await` on every read and write. The connection loop is straight-line code;
// a suspended connection is a coroutine frame, resumed on a worker of the pool.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, whose idle workers run the sockets (worker_io), a listener on this thread
//   session   -> the loop in the coroutine: next() -> run / read / write / half_close / wait / close
//   run_job   -> fib: co_await when_all; busy: spin on the worker; sleep: co_await sleep_for;
//                busy and sleep end early when the client leaves (job.stop)
//
// Every socket call is made on the worker that owns the socket (pools::server::suspending_session):
// an idle worker waits in its io_context, and a completion hands the coroutine to that worker's
// own deque (thread_pool::enqueue). Each job is a coroutine of its own, so a connection's
// pipelined jobs run concurrently; they send their results back on a channel.
#include <pools/coroutines/coroutines.hpp>
#include <pools/coroutines/frame_allocator.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/main.hpp>
#include <pools/server/suspending_session.hpp>
#include <pools/server/work.hpp>
#include <pools/server/worker_io.hpp>

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <coroutine>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace pc = pools::coroutines;
using tcp = asio::ip::tcp;

pc::task<std::uint64_t> fib(std::uint64_t n) {
  if (n < srv::fib_cutoff) co_return srv::fib_serial(n);
  auto [a, b] = co_await pc::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

/// sleep_for as a task, for with_stop_token: under a stop token the sleep ends at once when it is
/// requested, and the co_await throws operation_cancelled.
pc::task<void> nap(pc::thread_pool& pool, std::chrono::milliseconds d) {
  co_await pc::sleep_for(pool, d);
}

/// A finished job, sent back to its connection's coroutine.
struct job_done {
  srv::job job;
  std::uint64_t value = 0;
  std::string error;  // non-empty: the job threw
};

class session : public srv::suspending_session {
 public:
  session(tcp::socket socket, srv::app& app, pc::thread_pool& pool)
      : suspending_session(std::move(socket)),
        app_(app),
        pool_(pool),
        done_(2 * 64) {}  // at most limits::max_pipeline jobs are in flight

  // The listener calls this on its thread.
  void start() override { pool_.spawn(pump(std::static_pointer_cast<session>(shared_from_this()))); }

 private:
  /// One socket operation, in the coroutine's frame until the socket's worker resumes it.
  struct io_op final : operation {
    io_op(session& s, op_kind kind, std::span<char> in, std::span<const char> out, time_point deadline)
        : operation(kind, in, out, deadline), s(s) {}
    session& s;
    std::coroutine_handle<> waiter;

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      waiter = h;
      s.post(*this);
    }
    io_result await_resume() const noexcept { return result; }
    void resume() override { s.pool_.enqueue(waiter); }
  };

  io_op io(op_kind kind, std::span<char> in = {}, std::span<const char> out = {},
           time_point deadline = time_point::max()) {
    return io_op(*this, kind, in, out, deadline);
  }

  // The connection loop, as straight-line code: each co_await suspends until the I/O ends.
  static pc::task<void> pump(std::shared_ptr<session> self) {
    session& s = *self;
    srv::connection conn(s.app_, s.peer());
    std::size_t jobs = 0;
    for (bool open = true; open;) {
      if (s.take_stop()) conn.shutdown();  // no read is in flight here
      switch (conn.next()) {
        case srv::action::run: {
          // try_spawn: a full queue (--queue-limit) answers 503 rather than queue without bound.
          // (On a worker a plain spawn would be accepted over the limit: it never waits there.)
          const srv::job job = conn.take_job();
          if (s.pool_.try_spawn(run_job(self, job)))
            ++jobs;
          else
            conn.reject(job);
          break;
        }
        case srv::action::read: {
          auto r = co_await s.io(op_kind::read, conn.read_buffer(), {}, conn.deadline());
          if (r.stopped && s.take_stop() && !conn.shutdown() && r.ec)  // mid-request: read on
            r = co_await s.io(op_kind::read, conn.read_buffer(), {}, conn.deadline());
          if (r.expired) conn.expire();
          if (r.ec)
            conn.end_of_input();
          else
            conn.commit(r.n);
          break;
        }
        case srv::action::write: {
          auto r = co_await s.io(op_kind::write, {}, conn.output(), conn.deadline());
          if (r.expired) conn.expire();
          if (r.ec)
            open = false;
          else
            conn.consume(r.n);
          break;
        }
        case srv::action::half_close:
          co_await s.io(op_kind::half_close);
          break;
        case srv::action::wait: {  // only jobs can be in flight: I/O is awaited in place
          s.watch_peer(conn);      // the client leaving stops them (job.stop)
          auto done = co_await s.done_.receive();
          --jobs;
          if (done->error.empty())
            conn.complete(done->job, done->value);
          else
            conn.fail(done->job, done->error);
          break;
        }
        case srv::action::close:
          open = false;
          break;
      }
    }
    for (; jobs > 0; --jobs) co_await s.done_.receive();  // they refer to this session
    co_await s.io(op_kind::close);
  }

  // A job is a coroutine of its own, so a connection's jobs run concurrently with each other.
  static pc::task<void> run_job(std::shared_ptr<session> self, srv::job job) {
    job_done done{job, 0, {}};
    try {
      switch (job.what) {
        case srv::job::kind::fib:
          done.value = co_await fib(job.arg);
          break;
        case srv::job::kind::busy:
          srv::busy_wait(job.duration(), job.stop);
          break;
        case srv::job::kind::sleep:  // a stop throws operation_cancelled: the core drops it
          co_await pc::with_stop_token(job.stop, nap(self->pool_, job.duration()));
          break;
        case srv::job::kind::respond:
          break;
      }
    } catch (const std::exception& e) {
      done.error = e.what();
    }
    co_await self->done_.send(std::move(done));
  }

  srv::app& app_;
  pc::thread_pool& pool_;
  pc::channel<job_done> done_;
};

void serve(srv::app& app) {
  asio::io_context control(1);                   // the acceptor and the signals: this thread
  srv::worker_io io(app.opts().threads);         // the sockets: one io_context per worker
  pc::thread_pool pool(app.opts().threads, io);  // after io: idle workers wait in it
  // Bounds the jobs waiting to start (and the new connections' coroutines: the listener's spawn
  // waits for room when the queue is full, which holds back accepting under overload).
  pool.set_capacity(app.opts().queue_limit);
  app.set_pool_stats([&] {
    const auto st = pool.stats();
    return std::vector<srv::pool_stat>{{"threads", pool.concurrency()},
                                       {"steals", st.steals},
                                       {"parks", st.parks},
                                       {"queued", pool.queued()}};
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
  // POOLS_FRAME_CACHE=off, as in the bench: every coroutine frame from the general allocator
  // (docs/reliability.md, "Soak": what the per-thread frame caches hold). Before any coroutine.
  if (const char* value = std::getenv("POOLS_FRAME_CACHE");
      value != nullptr && std::string_view(value) != "on") {
    if (std::string_view(value) != "off") {
      std::fprintf(stderr, "server_coroutines: POOLS_FRAME_CACHE='%s' is not a setting; use on or off\n",
                   value);
      return 2;
    }
    pc::frame_allocator::disable_caching();
  }
  return srv::run({.name = "coroutines",
                   .summary = "one coroutine per connection (pools::coroutines), co_await on Asio I/O",
                   .bounded_queue = true},
                  argc, argv, serve);
}
