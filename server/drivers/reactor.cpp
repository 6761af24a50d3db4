// server_reactor — the HTTP server on pools::reactor: completion callbacks on Asio io_contexts.
// How it waits: it does not. Every read, write, timer and job ends in a callback that calls
// pump() again; between callbacks a connection is only the state its pending handlers own.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the executor (--strategy per_thread | shared), listen, accept, signals, drain
//   session   -> the connection loop: next() -> run / read / write / half_close / wait / close
//   run_job   -> fib: continuation-passing fork-join; busy: a handler on any thread; sleep: a timer
//
// Each session lives on its own strand (reactor::make_strand: under per_thread its io_context's
// executor, free; under shared an asio::strand), so its handlers never run concurrently.
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/log.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
namespace reactor = pools::reactor;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

class session;

/// Every open session, so that a shutdown can reach them. Sessions close on many threads: a lock.
struct registry {
  std::mutex mutex;
  std::condition_variable changed;  // a session closed, or a signal arrived
  std::unordered_set<std::shared_ptr<session>> sessions;
  int signals = 0;
  std::atomic<std::uint64_t> jobs_run{0};
};

// Below this n a fork costs more than it saves: the leaves run fib_serial.
constexpr std::uint64_t fib_cutoff = 16;

/// fib(n) in continuation-passing style: a handler cannot wait for its children (that would hold
/// a reactor thread), so a fork leaves a join counter on the heap and the child that brings it to
/// zero runs the continuation `k` with the sum.
void fib_cps(reactor::executor& ex, std::uint64_t n, std::function<void(std::uint64_t)> k) {
  if (n < fib_cutoff) return k(srv::fib_serial(n));
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

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket socket, srv::app& app, registry& reg, reactor::executor& ex)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        conn_(app, srv::asio_support::peer(socket_)),
        registry_(reg),
        ex_(ex) {}

  void start() {
    srv::asio_support::tune(socket_);
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->pump(); });
  }

  // Both are called from other threads: they hop onto the session's strand first.
  void shutdown() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (!self->closed_ && self->conn_.shutdown()) self->socket_.cancel();
    });
  }
  void drop() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
  }

 private:
  // The connection loop: one step per call, resumed by each completion.
  void pump() {
    while (!closed_) {
      switch (conn_.next()) {
        case srv::action::run:
          run_job(conn_.take_job());
          break;
        case srv::action::read:
          return read();
        case srv::action::write:
          return write();
        case srv::action::half_close:
          socket_.shutdown(tcp::socket::shutdown_send, ignored_);
          break;
        case srv::action::wait:
          return;
        case srv::action::close:
          return close();
      }
    }
  }

  void read() {
    watch();
    socket_.async_read_some(srv::asio_support::buffer(conn_.read_buffer()),
                            [self = shared_from_this()](error_code ec, std::size_t n) {
                              if (ec)
                                self->conn_.end_of_input();
                              else
                                self->conn_.commit(n);
                              self->pump();
                            });
  }

  void write() {
    watch();
    asio::async_write(socket_, srv::asio_support::buffer(conn_.output()),
                      [self = shared_from_this()](error_code ec, std::size_t n) {
                        if (ec) return self->close();
                        self->conn_.consume(n);
                        self->pump();
                      });
  }

  // The watchdog, re-armed only when the deadline moved earlier (see fixture_driver.cpp).
  void watch() {
    const auto deadline = conn_.deadline();
    if (armed_ && deadline >= timer_.expiry()) return;
    armed_ = true;
    timer_.expires_at(deadline);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec || self->closed_) return;  // re-armed (operation_aborted) or closed
      self->armed_ = false;
      if (self->conn_.expire())
        self->socket_.cancel();  // the cancelled read or write lands in pump(), which closes
      else
        self->watch();
    });
  }

  // A job runs on whichever reactor thread it lands on; its completion hops back to the strand.
  void run_job(srv::job job) {
    registry_.jobs_run.fetch_add(1, std::memory_order_relaxed);
    auto done = [self = shared_from_this(), job](std::uint64_t value) {
      asio::post(self->socket_.get_executor(), [self, job, value] {
        self->conn_.complete(job, value);
        self->pump();
      });
    };
    switch (job.what) {
      case srv::job::kind::fib:
        ex_.post([this, job, done] { fib_cps(ex_, job.arg, done); });
        break;
      case srv::job::kind::busy:
        ex_.post([job, done] {
          srv::busy_wait(job.duration());
          done(0);
        });
        break;
      case srv::job::kind::sleep: {
        auto timer = std::make_shared<asio::steady_timer>(socket_.get_executor(), job.duration());
        timer->async_wait([timer, done](error_code) { done(0); });
        break;
      }
      case srv::job::kind::respond:
        done(0);
        break;
    }
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    socket_.close(ignored_);
    std::lock_guard lock(registry_.mutex);
    registry_.sessions.erase(shared_from_this());
    registry_.changed.notify_all();
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  srv::connection conn_;
  registry& registry_;
  reactor::executor& ex_;
  bool closed_ = false;
  bool armed_ = false;
  error_code ignored_;
};

void serve(srv::app& app) {
  const auto strategy = reactor::parse_strategy(app.opts().strategy).value_or(reactor::strategy::per_thread);
  registry reg;
  reactor::executor ex(app.opts().threads, strategy);
  app.set_pool_stats([&] {
    return std::vector<srv::pool_stat>{{"threads", ex.concurrency()},
                                       {"io_contexts", ex.context_count()},
                                       {"jobs_run", reg.jobs_run.load(std::memory_order_relaxed)}};
  });
  // The acceptor and the signals share one strand: a signal never races an accept.
  const auto control = reactor::make_strand(ex);
  auto acceptor = srv::asio_support::listen(control, app.opts());

  std::function<void()> accept = [&] {
    acceptor.async_accept(reactor::make_strand(ex), [&](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        auto s = std::make_shared<session>(std::move(socket), app, reg, ex);
        {
          std::lock_guard lock(reg.mutex);
          reg.sessions.insert(s);
        }
        s->start();
      } else {
        srv::log_warn("accept: {}", ec.message());  // e.g. out of descriptors: keep serving
      }
      accept();
    });
  };
  asio::post(control, accept);

  asio::signal_set signals(control, SIGINT, SIGTERM);
  std::function<void(error_code, int)> on_signal = [&](error_code ec, int signo) {
    if (ec) return;
    std::lock_guard lock(reg.mutex);
    if (reg.signals++ == 0) {
      srv::log_info("signal {}: stop accepting, finishing {} connections", signo, reg.sessions.size());
      acceptor.close();
      for (const auto& s : reg.sessions) s->shutdown();
    }
    reg.changed.notify_all();
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);

  // The main thread only waits: for a signal, then for the drain, the deadline or a second signal.
  std::unique_lock lock(reg.mutex);
  reg.changed.wait(lock, [&] { return reg.signals > 0; });
  reg.changed.wait_for(lock, app.opts().shutdown_timeout,
                       [&] { return reg.sessions.empty() || reg.signals > 1; });
  if (!reg.sessions.empty()) {
    srv::log_warn("shutdown: dropping {} connections", reg.sessions.size());
    for (const auto& s : reg.sessions) s->drop();
  }
  lock.unlock();
  asio::post(control, [&] { signals.cancel(); });
  ex.stop();  // drains: the dropped sessions close, jobs in flight end
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = "reactor",
                   .summary = "callbacks on Asio io_contexts (pools::reactor), per_thread or shared",
                   .strategies = {"per_thread", "shared"}},
                  argc, argv, serve);
}
