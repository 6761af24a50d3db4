// SPDX-License-Identifier: MIT
// pools/server/suspending_session.hpp — the socket half of a session whose connection loop
// suspends: a fiber (fibers driver) or a coroutine (coroutines driver) on a pool whose idle
// workers run the sockets' io_contexts (pools/server/worker_io.hpp). What differs between the two
// drivers is only how the loop waits for an operation; this is what they share:
//
//   loop (fiber / coroutine, on worker k)            socket's worker (k, unless the loop was stolen)
//   ─────────────────────────────────────            ─────────────────────────────────────────────
//   op{read, conn.read_buffer(), {}, deadline}
//   post(op); suspend ──── in place on worker k ──▶   begin(op): async_read_some + the watchdog
//                          (a post if stolen)          completion: op.result = {ec, n}; op.resume()
//   resumed on worker k's deque: op.result ◀───────
//
// Everything on the socket side — the socket, the watchdog timer, the operation in flight — is
// touched only on the socket's worker, as if it were a single-threaded I/O loop: the loop starts
// an operation in place when it runs there (the usual case: a completion pushes the loop onto the
// deque of the worker that ran it) and posts it there otherwise. The connection object is only
// touched by the loop, so the socket side never calls it: the watchdog and a shutdown *mark* the
// operation in flight (result.expired, result.stopped) and cancel the socket, and the loop then
// tells the connection (expire(), shutdown()) itself.
//
// While the loop waits for jobs, nothing reads the socket: at action::wait the loop calls
// watch_peer(conn), and the socket's worker watches for the client leaving (a peek,
// asio_support::peer_watch). On EOF or a reset it stops the jobs through the stop source the loop
// handed it (conn.jobs_stop(): thread-safe); they end early, and the loop, resumed by their
// completions, finds the connection gone and closes.
#pragma once

#include <pools/server/asio_support.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/listener.hpp>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstddef>
#include <memory>
#include <span>
#include <stop_token>
#include <string>

namespace pools::server {

class suspending_session : public session_base, public std::enable_shared_from_this<suspending_session> {
 public:
  using tcp = boost::asio::ip::tcp;
  using time_point = connection::clock::time_point;
  enum class op_kind { read, write, half_close, close };

  struct io_result {
    boost::system::error_code ec;
    std::size_t n = 0;
    bool expired = false;  // the watchdog cancelled it: tell the connection (expire())
    bool stopped = false;  // a shutdown cancelled this read: tell the connection (shutdown())
  };

  /// One socket operation. It lives where the loop is suspended (a fiber's stack, a coroutine's
  /// frame) until resume() returns control to the loop.
  class operation {
   public:
    explicit operation(op_kind kind, std::span<char> in = {}, std::span<const char> out = {},
                       time_point deadline = time_point::max())
        : kind(kind), in(in), out(out), deadline(deadline) {}
    operation(const operation&) = delete;
    operation& operator=(const operation&) = delete;

    const op_kind kind;
    const std::span<char> in;
    const std::span<const char> out;
    const time_point deadline;
    io_result result;

   protected:
    ~operation() = default;

   private:
    friend class suspending_session;
    /// On the socket's worker, once `result` is set: make the loop runnable. The last touch of
    /// the operation: the loop may free it as soon as it runs. Never called from within post().
    virtual void resume() = 0;
  };

  /// The listener's thread. Reaches the socket's worker; the loop takes the request at its next
  /// step (take_stop()), or now, through result.stopped, if it is reading.
  void shutdown() override;
  /// The listener's thread. Closes the socket on its worker: every operation fails, the loop ends
  /// on its own (a running job first), which keeps the pool's drain from waiting on a loop that
  /// would never resume.
  void drop() override;

 protected:
  /// Tunes the socket (TCP_NODELAY) and records the peer for the access log.
  explicit suspending_session(tcp::socket socket);

  /// The loop's thread: start `op` on the socket's worker; op.resume() says when it has ended.
  /// One operation at a time. op_kind::close closes the socket and tells the listener.
  void post(operation& op);
  /// The loop's thread: true once after a shutdown(), when the loop must call
  /// connection::shutdown() (no read is in flight then).
  bool take_stop();
  /// The loop's thread, at action::wait: if the connection wants it (jobs running), the socket's
  /// worker watches for the client leaving and stops the jobs when it does.
  void watch_peer(connection& conn);
  const std::string& peer() const noexcept { return peer_; }

 private:
  void begin(operation& op);
  void watch();

  tcp::socket socket_;
  boost::asio::steady_timer timer_;
  std::string peer_;
  std::atomic<int> stop_{0};             // 0, 1 = shutdown requested (socket's worker), 2 = taken (the loop)
  operation* op_ = nullptr;              // the read or write in flight, if any (socket's worker)
  bool armed_ = false;                   // socket's worker
  asio_support::peer_watch peer_watch_;  // socket's worker
  std::stop_source jobs_stop_{std::nostopstate};  // socket's worker: the loop's conn.jobs_stop()
};

}  // namespace pools::server
