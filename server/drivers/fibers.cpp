// server_fibers — the HTTP server on pools::fibers: one fiber per connection.
// How it waits: blocking-style read() and write() that suspend the fiber (never its worker). The
// connection loop is straight-line code; a suspended connection is a fiber stack.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), listen, accept, signals, drain
//   session   -> the connection loop: next() -> run / read / write / half_close / close
//   run_job   -> in the fiber: fib with spawn/join, busy on the worker, sleep with sleep_for
//
// Asio's completions run on the I/O thread; each one only fulfils the fiber's promise, which
// makes the fiber runnable on the pool again. Every socket call is made on the I/O thread (an
// io_op posted there), and the connection object only from its fiber. The watchdog and a shutdown
// reach an operation in flight from the I/O side and mark its result; the fiber then tells the
// connection (expire(), shutdown()) itself. Jobs run in the connection's fiber, one at a time:
// a fiber that blocks costs nothing but its stack, so there is no need for a second one.
#include <pools/fibers/future.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
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
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace pf = pools::fibers;
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

std::uint64_t fib(pf::thread_pool& pool, std::uint64_t n) {
  if (n < fib_cutoff) return srv::fib_serial(n);
  auto left = pool.spawn([&pool, n] { return fib(pool, n - 1); });
  const std::uint64_t right = fib(pool, n - 2);
  return left.join() + right;
}

struct io_result {
  error_code ec;
  std::size_t n = 0;
  bool expired = false;  // the watchdog cancelled it: tell the connection (expire())
  bool stopped = false;  // a shutdown cancelled this read: tell the connection (shutdown())
};

class session : public std::enable_shared_from_this<session> {
 public:
  enum class op_kind { read, write, half_close, close };

  /// One socket operation: started on the I/O thread; its completion fulfils `done`.
  struct io_op {
    op_kind kind;
    std::span<char> in;
    std::span<const char> out;
    time_point deadline;
    io_result result{};
    pf::promise<void> done{};
  };

  session(tcp::socket socket, srv::app& app, registry& reg, pf::thread_pool& pool)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        app_(app),
        peer_(srv::asio_support::peer(socket_)),
        registry_(reg),
        pool_(pool) {}

  void start() {
    srv::asio_support::tune(socket_);
    pool_.post([self = shared_from_this()] { self->pump(); });
  }

  // I/O thread. The fiber takes the request at its next step, or now if it is reading.
  void shutdown() {
    int none = 0;
    if (stop_.compare_exchange_strong(none, 1) && op_ != nullptr && op_->kind == op_kind::read) {
      op_->result.stopped = true;
      socket_.cancel();
    }
  }
  void drop() { socket_.close(ignored_); }  // every operation fails: the fiber ends

 private:
  // The connection loop, as straight-line code: each io() suspends the fiber until the I/O ends.
  void pump() {
    srv::connection conn(app_, peer_);
    for (bool open = true; open;) {
      if (take_stop()) conn.shutdown();  // no read is in flight here
      switch (conn.next()) {
        case srv::action::run:
          run_job(conn, conn.take_job());
          break;
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
        case srv::action::wait:  // jobs run in place and I/O is awaited in place: never here
        case srv::action::close:
          open = false;
          break;
      }
    }
    io(op_kind::close);
  }

  void run_job(srv::connection& conn, srv::job job) {
    registry_.jobs_run.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t value = 0;
    try {
      switch (job.what) {
        case srv::job::kind::fib:
          value = fib(pool_, job.arg);
          break;
        case srv::job::kind::busy:
          srv::busy_wait(job.duration());
          break;
        case srv::job::kind::sleep:
          pf::this_fiber::sleep_for(job.duration());
          break;
        case srv::job::kind::respond:
          break;
      }
    } catch (const std::exception& e) {
      return conn.fail(job, e.what());
    }
    conn.complete(job, value);
  }

  io_result io(op_kind kind, std::span<char> in = {}, std::span<const char> out = {},
               time_point deadline = time_point::max()) {
    io_op op{kind, in, out, deadline};
    auto done = op.done.get_future();
    asio::post(socket_.get_executor(), [this, &op] { start(op); });
    done.get();  // suspends the fiber; `op` lives on its stack until then
    return op.result;
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
      // The promise moves out first: once it is fulfilled the fiber may return and free `op`.
      pf::promise<void>(std::move(op.done)).set_value();
    };
    switch (op.kind) {
      case op_kind::read:
        if (stop_.load() == 1) {  // a shutdown came before this read: the fiber takes it
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
  pf::thread_pool& pool_;
  std::atomic<int> stop_{0};  // 0, 1 = shutdown requested (I/O thread), 2 = taken (fiber)
  io_op* op_ = nullptr;       // the read or write in flight, if any
  bool armed_ = false;
  error_code ignored_;
};

void serve(srv::app& app) {
  asio::io_context io(1);
  registry reg;
  pf::thread_pool pool(app.opts().threads);  // after io: its drain may still post to io
  app.set_pool_stats([&] {
    const auto st = pool.stats();
    return std::vector<srv::pool_stat>{{"threads", pool.concurrency()},
                                       {"fibers_created", st.fibers_created},
                                       {"fibers_alive", st.fibers_alive},
                                       {"jobs_run", reg.jobs_run.load(std::memory_order_relaxed)}};
  });
  auto acceptor = srv::asio_support::listen(io, app.opts());
  asio::steady_timer shutdown_deadline(io);
  auto work = asio::make_work_guard(io);  // a connection running a job has no I/O pending

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
    // Dropping closes the sockets; the fibers then end on their own (a running job first),
    // which keeps the pool's drain from waiting on a fiber that would never resume.
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
  return srv::run(
      {.name = "fibers", .summary = "one fiber per connection (pools::fibers), blocking-style Asio I/O"},
      argc, argv, serve);
}
