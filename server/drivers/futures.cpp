// server_futures — the HTTP server on pools::futures: half-sync/half-async (the thesis's
// "worker model"). How it waits: the I/O side never does; the workers do.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), a pools::server::listener on it
//   session   -> the connection loop in callbacks (pools::server::callback_session)
//   run_job   -> a pool task runs the job (fib, busy, sleep) and posts its completion back
//
// The asynchronous half is Asio callbacks on one thread: it reads, parses, writes and owns every
// connection, so nothing there is shared. The synchronous half is the pool: a task runs one job
// start to end, blocking its worker as long as it takes. That is the model's price: /sleep holds a
// worker (N workers serve at most N sleeps at once), and fib is serial inside one task (nested
// futures on one pool deadlock once every worker waits for a subtask).
// Every handler that may take time goes to the pool: fib, busy, sleep. What the core answers at
// once stays on the I/O thread: /stats (as a task it would queue behind the sleeps it observes;
// program.every_request_is_a_job sends everything, the thesis's pure form), /echo (a copy of a
// body already in memory) and /static (the core pread()s 64 KiB pieces as the socket drains, from
// the page cache in the common case: a pool round trip per piece would cost more than the read;
// a cold disk read stalls the I/O thread, the price of keeping it there).
#include <pools/futures/thread_pool.hpp>
#include <pools/server/callback_session.hpp>
#include <pools/server/main.hpp>
#include <pools/server/work.hpp>

#include <boost/asio/io_context.hpp>

#include <exception>
#include <memory>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
using tcp = asio::ip::tcp;

class session : public srv::callback_session {
 public:
  session(tcp::socket socket, srv::app& app, pools::futures::thread_pool& pool)
      : callback_session(std::move(socket), app), pool_(pool) {}

 private:
  // The synchronous half: a task runs the whole job on a worker; finish() posts it back.
  void run_job(srv::job job) override {
    pool_.detach_task([self = shared_from_this(), job] {
      // Dropped while queued (the shutdown deadline): nobody to answer, and the drain waits.
      if (self->abandoned()) return;
      std::uint64_t value = 0;
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
      } catch (const std::exception& e) {
        return self->finish(job, 0, e.what());
      }
      self->finish(job, value);
    });
  }

  pools::futures::thread_pool& pool_;
};

void serve(srv::app& app) {
  asio::io_context io(1);
  pools::futures::thread_pool pool(app.opts().threads);  // after io: its tasks post to io
  app.set_pool_stats([&] {
    return std::vector<srv::pool_stat>{{"threads", pool.get_thread_count()},
                                       {"tasks_queued", pool.get_tasks_queued()},
                                       {"tasks_running", pool.get_tasks_running()}};
  });
  srv::listener listener(app, io.get_executor(), [&](tcp::socket socket) {
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
       .summary = "half-sync/half-async: one Asio I/O thread, jobs as pool tasks (pools::futures)"},
      argc, argv, serve);
}
