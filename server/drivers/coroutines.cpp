// server_coroutines — the HTTP server on pools::coroutines: one coroutine per connection.
// How it waits: `co_await` on every read and write. The connection loop is straight-line code;
// a suspended connection is a coroutine frame, resumed on a worker of the pool.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), listen, accept, signals, drain
//   session   -> the connection loop: next() -> run / read / write / half_close / wait / close
//   run_job   -> fib: co_await when_all; busy: spin on the worker; sleep: co_await sleep_for
//
// Asio's completions run on the I/O thread; each one only hands the coroutine back to the pool
// (thread_pool::enqueue). Every socket call is made on the I/O thread (an io_op posted there), and
// the connection object only from its coroutine, so nothing is shared without a hand-off. The
// watchdog and a shutdown reach an operation in flight from the I/O side and mark its result;
// the coroutine then tells the connection (expire(), shutdown()) itself.
#include <pools/coroutines/coroutines.hpp>
#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/log.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <coroutine>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace pc = pools::coroutines;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using time_point = srv::connection::clock::time_point;

class session;

/// Every open session, so that a shutdown can reach them. Touched on the I/O thread only.
struct registry {
  std::unordered_set<std::shared_ptr<session>> sessions;
  bool stopping = false;
  std::function<void()> drained;  // called when stopping and the last session has closed
  std::atomic<std::uint64_t> jobs_run{0};
};

// Below this n a fork costs more than it saves: the leaves run fib_serial.
constexpr std::uint64_t fib_cutoff = 16;

pc::task<std::uint64_t> fib(std::uint64_t n) {
  if (n < fib_cutoff) co_return srv::fib_serial(n);
  auto [a, b] = co_await pc::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

struct io_result {
  error_code ec;
  std::size_t n = 0;
  bool expired = false;  // the watchdog cancelled it: tell the connection (expire())
  bool stopped = false;  // a shutdown cancelled this read: tell the connection (shutdown())
};

/// A finished job, sent back to its connection's coroutine.
struct job_done {
  srv::job job;
  std::uint64_t value = 0;
  std::string error;  // non-empty: the job threw
};

class session : public std::enable_shared_from_this<session> {
 public:
  enum class op_kind { read, write, half_close, close };

  /// One socket operation: started on the I/O thread, completed by resuming the coroutine.
  struct io_op {
    session& s;
    op_kind kind;
    std::span<char> in;
    std::span<const char> out;
    time_point deadline;
    io_result result{};
    std::coroutine_handle<> waiter;

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      waiter = h;
      asio::post(s.socket_.get_executor(), [this] { s.start(*this); });
    }
    io_result await_resume() const noexcept { return result; }
  };

  session(tcp::socket socket, srv::app& app, registry& reg, pc::thread_pool& pool)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        app_(app),
        peer_(srv::asio_support::peer(socket_)),
        registry_(reg),
        pool_(pool),
        done_(2 * 64) {}  // at most limits::max_pipeline jobs are in flight

  void start() {
    srv::asio_support::tune(socket_);
    pool_.spawn(pump(shared_from_this()));
  }

  // I/O thread. The coroutine takes the request at its next step, or now if it is reading.
  void shutdown() {
    int none = 0;
    if (stop_.compare_exchange_strong(none, 1) && op_ != nullptr && op_->kind == op_kind::read) {
      op_->result.stopped = true;
      socket_.cancel();
    }
  }
  void drop() { socket_.close(ignored_); }  // every operation fails: the coroutine ends

 private:
  // The connection loop, as straight-line code: each co_await suspends until the I/O ends.
  static pc::task<void> pump(std::shared_ptr<session> self) {
    session& s = *self;
    srv::connection conn(s.app_, s.peer_);
    std::size_t jobs = 0;
    for (bool open = true; open;) {
      if (s.take_stop()) conn.shutdown();  // no read is in flight here
      switch (conn.next()) {
        case srv::action::run:
          ++jobs;
          s.pool_.spawn(run_job(self, conn.take_job()));
          break;
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

  // A job is a coroutine of its own, so a connection's jobs run in parallel with each other.
  static pc::task<void> run_job(std::shared_ptr<session> self, srv::job job) {
    self->registry_.jobs_run.fetch_add(1, std::memory_order_relaxed);
    job_done done{job, 0, {}};
    try {
      switch (job.what) {
        case srv::job::kind::fib:
          done.value = co_await fib(job.arg);
          break;
        case srv::job::kind::busy:
          srv::busy_wait(job.duration());
          break;
        case srv::job::kind::sleep:
          co_await pc::sleep_for(self->pool_, job.duration());
          break;
        case srv::job::kind::respond:
          break;
      }
    } catch (const std::exception& e) {
      done.error = e.what();
    }
    co_await self->done_.send(std::move(done));
  }

  io_op io(op_kind kind, std::span<char> in = {}, std::span<const char> out = {},
           time_point deadline = time_point::max()) {
    return io_op{*this, kind, in, out, deadline, {}, {}};
  }

  bool take_stop() {
    int requested = 1;
    return stop_.compare_exchange_strong(requested, 2);
  }

  // I/O thread from here on.
  void start(io_op& op) {
    auto resume = [this, &op](error_code ec, std::size_t n) {
      op_ = nullptr;
      op.result.ec = ec;
      op.result.n = n;
      pool_.enqueue(op.waiter);
    };
    switch (op.kind) {
      case op_kind::read:
        if (stop_.load() == 1) {  // a shutdown came before this read: the coroutine takes it
          op.result.stopped = true;
          return resume(asio::error::operation_aborted, 0);
        }
        op_ = &op;
        watch();
        return socket_.async_read_some(srv::asio_support::buffer(op.in), resume);
      case op_kind::write:
        op_ = &op;
        watch();
        return asio::async_write(socket_, srv::asio_support::buffer(op.out), resume);
      case op_kind::half_close:
        socket_.shutdown(tcp::socket::shutdown_send, ignored_);
        return resume({}, 0);
      case op_kind::close: {
        timer_.cancel();
        socket_.close(ignored_);
        auto self = shared_from_this();  // the registry may hold the last reference but one
        registry_.sessions.erase(self);
        if (registry_.stopping && registry_.sessions.empty()) registry_.drained();
        return resume({}, 0);
      }
    }
  }

  // The watchdog, re-armed only when the deadline moved earlier (see fixture_driver.cpp). The
  // operation in flight carries its deadline: the connection does not change while it waits.
  void watch() {
    if (armed_ && op_->deadline >= timer_.expiry()) return;
    armed_ = true;
    timer_.expires_at(op_->deadline);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec) return;  // re-armed (operation_aborted) or closed
      self->armed_ = false;
      if (self->op_ == nullptr) return;  // the next operation re-arms
      if (srv::connection::clock::now() < self->op_->deadline) return self->watch();
      self->op_->result.expired = true;
      self->socket_.cancel();
    });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  srv::app& app_;
  std::string peer_;
  registry& registry_;
  pc::thread_pool& pool_;
  pc::channel<job_done> done_;
  std::atomic<int> stop_{0};  // 0, 1 = shutdown requested (I/O thread), 2 = taken (coroutine)
  io_op* op_ = nullptr;       // the read or write in flight, if any
  bool armed_ = false;
  error_code ignored_;
};

void serve(srv::app& app) {
  asio::io_context io(1);
  registry reg;
  pc::thread_pool pool(app.opts().threads);  // after io: its drain may still post to io
  app.set_pool_stats([&] {
    const auto st = pool.stats();
    return std::vector<srv::pool_stat>{{"threads", pool.concurrency()},
                                       {"steals", st.steals},
                                       {"parks", st.parks},
                                       {"jobs_run", reg.jobs_run.load(std::memory_order_relaxed)}};
  });
  auto acceptor = srv::asio_support::listen(io, app.opts());
  asio::steady_timer shutdown_deadline(io);
  auto work = asio::make_work_guard(io);  // a connection waiting for a job has no I/O pending

  std::function<void()> accept = [&] {
    acceptor.async_accept([&](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || reg.stopping) return;
      if (!ec) {
        auto s = std::make_shared<session>(std::move(socket), app, reg, pool);
        reg.sessions.insert(s);
        s->start();
      } else {
        srv::log_warn("accept: {}", ec.message());  // e.g. out of descriptors: keep serving
      }
      accept();
    });
  };
  accept();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  auto drop_all = [&] {
    for (const auto& s : reg.sessions) s->drop();
  };
  reg.drained = [&] {
    shutdown_deadline.cancel();
    signals.cancel();
    work.reset();
  };
  signals.async_wait([&](error_code ec, int signo) {
    if (ec) return;
    srv::log_info("signal {}: stop accepting, finishing {} connections", signo, reg.sessions.size());
    reg.stopping = true;
    acceptor.close();
    for (const auto& s : reg.sessions) s->shutdown();
    shutdown_deadline.expires_after(app.opts().shutdown_timeout);
    // Dropping closes the sockets; the coroutines then end on their own (a running job first),
    // which keeps the pool's drain from waiting on a frame that would never resume.
    shutdown_deadline.async_wait([&](error_code e) {
      if (e) return;
      srv::log_warn("shutdown deadline: dropping {} connections", reg.sessions.size());
      drop_all();
    });
    signals.async_wait([&](error_code e, int) {
      if (!e) drop_all();  // a second signal: stop now
    });
    if (reg.sessions.empty()) reg.drained();
  });

  io.run();
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = "coroutines",
                   .summary = "one coroutine per connection (pools::coroutines), co_await on Asio I/O"},
                  argc, argv, serve);
}
