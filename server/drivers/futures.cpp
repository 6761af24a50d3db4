// server_futures — the HTTP server on pools::futures: half-sync/half-async (the thesis's
// "worker model"). How it waits: the I/O side never does; the workers do.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), listen, accept, signals, drain
//   session   -> the connection loop: next() -> run / read / write / half_close / wait / close
//   run_job   -> a pool task runs the job (fib, busy, sleep) and posts its completion back to the
//                I/O thread
//
// The asynchronous half is plain Asio callbacks on one thread: it reads, parses (the core) and
// writes, and owns every connection, so nothing there is shared. The synchronous half is the
// pool: a task runs one request's work start to end, blocking its worker as long as it takes.
// Requests the core answers at once (/plaintext, /stats, files) stay on the I/O thread:
// with every request a task (program.every_request_is_a_job, the thesis's pure form) a /stats
// would queue behind the sleeps it is meant to observe. That is the model's price: /sleep holds a worker for
// its whole duration (a pool of N threads serves at most N sleeps at once, and a /plaintext queued behind
// them waits), and fib cannot fork-join with nested futures (a task that waits for a subtask of the same pool
// deadlocks once every worker waits), so it is computed serially inside one task.
#include <pools/futures/thread_pool.hpp>
#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/log.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
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
  std::atomic<std::uint64_t> jobs_run{0};
};

class session : public std::enable_shared_from_this<session> {
 public:
  session(tcp::socket socket, srv::app& app, registry& reg, pools::futures::thread_pool& pool)
      : socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        conn_(app, srv::asio_support::peer(socket_)),
        registry_(reg),
        pool_(pool) {}

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

  // The synchronous half: the task runs the whole job on a worker, then posts back.
  void run_job(srv::job job) {
    registry_.jobs_run.fetch_add(1, std::memory_order_relaxed);
    pool_.detach_task([self = shared_from_this(), job] {
      std::uint64_t value = 0;
      std::exception_ptr error;
      try {
        switch (job.what) {
          case srv::job::kind::fib:  // serial: nested futures would deadlock the pool
            value = srv::fib_serial(job.arg);
            break;
          case srv::job::kind::busy:
            srv::busy_wait(job.duration());
            break;
          case srv::job::kind::sleep:  // blocks this worker: what the model costs
            std::this_thread::sleep_for(job.duration());
            break;
          case srv::job::kind::respond:  // the response is built: only the round trip
            break;
        }
      } catch (...) {
        error = std::current_exception();
      }
      asio::post(self->socket_.get_executor(), [self, job, value, error] {
        if (error)
          self->conn_.fail(job, "job failed");
        else
          self->conn_.complete(job, value);
        self->pump();
      });
    });
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
  pools::futures::thread_pool& pool_;
  bool closed_ = false;
  bool armed_ = false;
  error_code ignored_;
};

void serve(srv::app& app) {
  asio::io_context io(1);
  registry reg;
  pools::futures::thread_pool pool(app.opts().threads);  // after io: its tasks post to io
  app.set_pool_stats([&] {
    return std::vector<srv::pool_stat>{{"threads", pool.get_thread_count()},
                                       {"tasks_queued", pool.get_tasks_queued()},
                                       {"tasks_running", pool.get_tasks_running()},
                                       {"jobs_run", reg.jobs_run.load(std::memory_order_relaxed)}};
  });
  auto acceptor = srv::asio_support::listen(io, app.opts());
  asio::steady_timer shutdown_deadline(io);

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
  // Dropped connections may still have tasks on the pool: let them finish and deliver their
  // completions (to closed sessions) here, rather than leave them to the io_context's destructor.
  pool.wait();
  io.restart();
  io.poll();
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run(
      {.name = "futures",
       .summary = "half-sync/half-async: one Asio I/O thread, jobs as pool tasks (pools::futures)"},
      argc, argv, serve);
}
