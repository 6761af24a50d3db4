// SPDX-License-Identifier: MIT
// server_futures — the HTTP server on pools::futures: half-sync/half-async. How it waits: the
// I/O side never does; the workers do.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), a pools::server::listener on it
//   session   -> pools::server::pool_session: the connection loop in callbacks on the I/O thread,
//                each job a pool task that runs it start to end and posts its completion back
//
// This is the generic driver (server/drivers/generic.cpp: the same session over any executor)
// plus what the futures pool can report: /stats shows its queue, and the shutdown waits with
// pool.wait() instead of destroying the pool.
// Every handler that may take time goes to the pool: fib, busy, sleep. What the core answers at
// once stays on the I/O thread: /stats (as a task it would queue behind the sleeps it observes;
// program.every_request_is_a_job sends everything, the "worker model" in its pure form), /echo (a
// copy of a body already in memory) and /static (the core reads 64 KiB pieces as the socket
// drains, from the page cache in the common case: a pool round trip per piece would cost more than
// the read).
#include <pools/futures/thread_pool.hpp>
#include <pools/server/main.hpp>
#include <pools/server/pool_session.hpp>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
using pool_type = pools::futures::thread_pool;
using session = srv::pool_session<pool_type>;

void serve(srv::app& app) {
  asio::io_context io(1);
  pool_type pool(app.opts().threads);         // after io: its tasks post to io
  pool.set_capacity(app.opts().queue_limit);  // a full queue: pool_session answers 503
  app.set_pool_stats([&] {
    return std::vector<srv::pool_stat>{{"threads", pool.get_thread_count()},
                                       {"tasks_queued", pool.get_tasks_queued()},
                                       {"tasks_running", pool.get_tasks_running()}};
  });
  srv::listener listener(app, io.get_executor(), [&](asio::ip::tcp::socket socket) {
    return std::make_shared<session>(std::move(socket), app, pool);
  });
  io.run();  // until the listener is done: a signal came and the sessions have closed
  // A dropped session may still have tasks on the pool: let them finish and deliver their
  // completions (to closed sessions) here, rather than leave them to the io_context's destructor.
  pool.wait();
  io.restart();
  io.poll();
}

}  // namespace

int main(int argc, char** argv) {
  return srv::run(
      {.name = "futures",
       .summary = "half-sync/half-async: one Asio I/O thread, jobs as pool tasks (pools::futures)",
       .bounded_queue = true},
      argc, argv, serve);
}
