// SPDX-License-Identifier: MIT
// server_fixture — a TEST-ONLY driver. It is NOT one of the four variants and uses no pool:
// plain Boost.Asio callbacks on one io_context run by one thread, with fib and busy jobs run
// inline on that thread and sleep jobs on an Asio timer. It exists to exercise the server core
// and the end-to-end test (server_e2e_fixture) without any variant, and as the smallest complete
// example of the outline every driver follows (server/README.md, "The driver outline").
// How it waits: it does not; every read, write and timer ends in a callback on the one thread.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> one io_context run by this thread, a pools::server::listener on it
//   session   -> the connection loop in callbacks (pools::server::callback_session)
//   run_job   -> fib and busy inline on the I/O thread, sleep on a timer (cancelled when the
//                client leaves: job.stop)
//
// --threads is accepted and ignored (reported in /stats): this driver always uses one thread.
#include <pools/server/callback_session.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <optional>
#include <stop_token>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
using tcp = asio::ip::tcp;

/// A sleep job's timer, cancelled when the client leaves. The stop is requested by this thread's
/// own handlers (the session's watch, or its close), so the callback may touch the timer.
struct sleeper {
  struct cancel_timer {
    asio::steady_timer* timer = nullptr;
    void operator()() const { timer->cancel(); }
  };
  sleeper(const asio::any_io_executor& ex, const srv::job& job) : timer(ex, job.duration()) {}
  asio::steady_timer timer;
  std::optional<std::stop_callback<cancel_timer>> on_stop;
};

class session : public srv::callback_session {
 public:
  session(tcp::socket socket, srv::app& app) : callback_session(std::move(socket), app) {}

 private:
  // On the I/O thread, inside the loop: fib and busy complete at once, holding the only thread.
  void run_job(srv::job job) override {
    switch (job.what) {
      case srv::job::kind::fib:
        conn().complete(job, srv::fib_serial(job.arg));
        break;
      case srv::job::kind::busy:
        srv::busy_wait(job.duration());
        conn().complete(job);
        break;
      case srv::job::kind::sleep: {
        auto nap = std::make_shared<sleeper>(executor(), job);
        nap->timer.async_wait(
            [self = shared_from_this(), nap, job](boost::system::error_code) { self->finish(job); });
        nap->on_stop.emplace(job.stop, sleeper::cancel_timer{&nap->timer});  // after the wait began
        break;
      }
      case srv::job::kind::respond:
        conn().complete(job);
        break;
    }
  }
};

void serve(srv::app& app) {
  asio::io_context io(1);
  srv::listener listener(app, io.get_executor(), [&](tcp::socket socket) {
    return std::make_shared<session>(std::move(socket), app);
  });
  io.run();  // until the listener is done: a signal came and the sessions have closed
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = "fixture", .summary = "TEST-ONLY driver: one thread, Asio callbacks, jobs inline"},
                  argc, argv, serve);
}
