// server_fixture — a TEST-ONLY driver. It is NOT one of the four variants and uses no pool:
// plain Boost.Asio callbacks on one io_context run by one thread, with fib and busy jobs run
// inline on that thread and sleep jobs on an Asio timer. It exists to exercise the server core
// and the end-to-end test (server_e2e_fixture) without any variant, and as the smallest complete
// example of the outline every driver follows (server/README.md, "The driver outline"):
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> listen, accept loop, signal_set -> graceful shutdown, run the event loop
//   session   -> the connection loop: next() -> run / read / write / half_close / wait / close,
//                one watchdog timer armed for connection::deadline() around every read and write
//   run_job   -> how this model runs fib, busy and sleep
//
// --threads is accepted and ignored (reported in /stats): this driver always uses one thread.
#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/log.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <memory>
#include <unordered_set>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

class session;

/// Every open session, so that a shutdown can reach them. One thread: no lock.
struct registry {
  std::unordered_set<std::shared_ptr<session>> sessions;
  bool stopping = false;
  std::function<void()> drained;  // called when stopping and the last session has closed
  std::uint64_t jobs_run = 0;
};

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket socket, srv::app& app, registry& reg)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        conn_(app, srv::asio_support::peer(socket_)),
        registry_(reg) {}

  void start() {
    srv::asio_support::tune(socket_);
    pump();
  }

  void shutdown() {
    if (conn_.shutdown()) socket_.cancel();  // an idle read: the cancelled read ends the session
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

  // The watchdog. Re-arming a timer costs a cancelled wait, so it is re-armed only when the
  // deadline moved *earlier* than the armed expiry (a request started: the header timeout); when
  // it moved later (more bytes arrived), the armed wait fires, expire() says "not yet", and the
  // handler re-arms for the new deadline. The common keep-alive path touches no timer at all.
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

  void run_job(srv::job job) {
    ++registry_.jobs_run;
    switch (job.what) {
      case srv::job::kind::fib:
        conn_.complete(job, srv::fib_serial(job.arg));
        break;
      case srv::job::kind::busy:
        srv::busy_wait(job.duration());
        conn_.complete(job);
        break;
      case srv::job::kind::sleep: {
        auto timer = std::make_shared<asio::steady_timer>(socket_.get_executor(), job.duration());
        timer->async_wait([self = shared_from_this(), timer, job](error_code) {
          self->conn_.complete(job);
          self->pump();
        });
        break;
      }
      case srv::job::kind::respond:
        conn_.complete(job);
        break;
    }
  }

  void close() {
    closed_ = true;
    timer_.cancel();
    socket_.close(ignored_);
    registry_.sessions.erase(shared_from_this());
    if (registry_.stopping && registry_.sessions.empty()) registry_.drained();
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  srv::connection conn_;
  registry& registry_;
  bool closed_ = false;
  bool armed_ = false;
  error_code ignored_;
};

void serve(srv::app& app) {
  asio::io_context io(1);
  registry reg;
  app.set_pool_stats([&reg] { return std::vector<srv::pool_stat>{{"jobs_run", reg.jobs_run}}; });
  auto acceptor = srv::asio_support::listen(io, app.opts());
  asio::steady_timer shutdown_deadline(io);

  std::function<void()> accept = [&] {
    acceptor.async_accept([&](error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || reg.stopping) return;
      if (!ec) {
        auto s = std::make_shared<session>(std::move(socket), app, reg);
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
  reg.drained = [&] {  // graceful shutdown complete: nothing is left to keep io.run() going
    shutdown_deadline.cancel();
    signals.cancel();
  };
  signals.async_wait([&](error_code ec, int signo) {
    if (ec) return;
    srv::log_info("signal {}: stop accepting, finishing {} connections", signo, reg.sessions.size());
    reg.stopping = true;
    acceptor.close();
    for (const auto& s : std::vector(reg.sessions.begin(), reg.sessions.end())) s->shutdown();
    shutdown_deadline.expires_after(app.opts().shutdown_timeout);
    shutdown_deadline.async_wait([&](error_code e) {
      if (e) return;
      srv::log_warn("shutdown deadline: dropping {} connections", reg.sessions.size());
      io.stop();
    });
    signals.async_wait([&](error_code e, int) {
      if (!e) io.stop();  // a second signal: stop now
    });
    if (reg.sessions.empty()) reg.drained();
  });

  io.run();
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = "fixture", .summary = "TEST-ONLY driver: one thread, Asio callbacks, jobs inline"},
                  argc, argv, serve);
}
