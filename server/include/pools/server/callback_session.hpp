// SPDX-License-Identifier: MIT
// pools/server/callback_session.hpp — the connection loop in completion callbacks, for drivers
// whose every read, write and timer ends in a handler on the session's executor (the I/O thread,
// or the session's strand): futures, reactor and the test fixture. What differs between them is
// only where a job runs; this is what they share:
//
//   pump():  while (!closed) switch (conn.next()) {
//              run        -> run_job(job): the driver's; it ends in conn().complete() at once,
//                            or in finish(job, value) later, from any thread
//              read       -> async_read_some(read_buffer())  -> commit / end_of_input -> pump()
//              write      -> async_write(output())           -> consume -> pump()  (error: close)
//              half_close -> shutdown(send)
//              wait       -> return: a handler in flight calls pump() again; while jobs run,
//                            watch the socket for the client leaving (peer_watch): on EOF or a
//                            reset, conn.jobs_stop().request_stop() ends them early
//              close      -> close the socket, tell the listener
//            }
//
// plus the watchdog timer, armed before every read and write no later than conn.deadline().
// Between handlers a connection is only the state its pending handlers own (each holds a
// shared_ptr to the session). Every call on the connection is made on the session's executor.
#pragma once

#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/listener.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace pools::server {

class callback_session : public session_base, public std::enable_shared_from_this<callback_session> {
 public:
  using tcp = boost::asio::ip::tcp;

  /// The listener calls these on its executor; each hops onto the session's executor (free when
  /// they are one io_context: one queued handler per connection).
  void start() override;
  void shutdown() override;
  void drop() override;  // closes: the handlers still pending, and jobs' completions, see it

  /// Any thread: the job started by run_job() is done (or failed, if `error` is not empty). The
  /// completion hops onto the session's executor and the loop goes on.
  void finish(const job& j, std::uint64_t value = 0, std::string error = {});

  /// Any thread: true once the connection has closed (dropped at the shutdown deadline, or
  /// ended by an error). A job queued for it has nobody left to answer, so a driver whose jobs
  /// wait in a queue skips it: otherwise a shutdown waits for the work of clients long gone.
  bool abandoned() const noexcept { return closed_.load(std::memory_order_relaxed); }

 protected:
  /// Tunes the socket (TCP_NODELAY); the connection counts itself open from here.
  callback_session(tcp::socket socket, app& app);

  /// action::run, on the session's executor inside the loop: start the job the driver's way. It
  /// either completes at once (conn().complete(j, value)) or calls finish() when it ends.
  virtual void run_job(job j) = 0;

  connection& conn() noexcept { return conn_; }
  tcp::socket::executor_type executor() noexcept { return socket_.get_executor(); }

 private:
  void pump();
  void read();
  void watch_peer();
  void write();
  void watch();
  void close();

  tcp::socket socket_;
  boost::asio::steady_timer timer_;
  connection conn_;
  // Written on the session's executor only; atomic because abandoned() reads it from a worker.
  // relaxed: a stale false costs one job run for nobody, never correctness (finish() re-checks
  // on the executor).
  std::atomic<bool> closed_{false};
  bool armed_ = false;
  asio_support::peer_watch peer_watch_;
};

}  // namespace pools::server
