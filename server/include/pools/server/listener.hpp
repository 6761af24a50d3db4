// SPDX-License-Identifier: MIT
// pools/server/listener.hpp — the part of serve() that does not depend on how a driver waits:
// the acceptor's loop, the open sessions, SIGINT/SIGTERM, the shutdown deadline and the drain.
// It is the contract of main.hpp, implemented once; a driver gives it only what differs:
//
//   srv::listener lst(app, control, [&](tcp::socket s) { return std::make_shared<session>(...); });
//   io.run();      // a driver whose main thread runs the control executor and the sockets
//   lst.wait();    // a driver whose threads run it (reactor): blocks until done
//   control.run(); lst.wait();   // sockets elsewhere (fibers, coroutines): after a second
//                                // signal `control` runs dry before the last session closes
//
// and a session class that says how shutdown() and drop() reach its connection (on its own I/O
// thread, strand, fiber or coroutine) and calls closed() once its socket is closed.
//
// What the listener does, on `control` (an executor whose handlers never run concurrently):
//  - accept: each socket (bound to socket_executor(), or to `control`) becomes a session by
//    `make`, is registered, then start()ed; accept errors are logged and accepting goes on. After
//    each accept, what else waits in the listen queue is taken at once (up to accept_batch).
//    Out of descriptors or socket memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): accepting pauses for
//    accept_backoff and is retried until it works, one log line when it pauses and one when it
//    resumes; the open connections are served throughout (listener.cpp says why).
//  - first signal: log it, close the acceptor (a socket it still hands over is closed
//    unanswered), shutdown() every open session, arm the deadline (opts().shutdown_timeout).
//  - the deadline, or a second signal: log how many are cut and drop() every open session.
//  - done: when a signal came and the last session has closed, the signal wait, the deadline and
//    a paused accept's timer are cancelled (nothing of the listener is left pending on `control`) and wait()
//    returns.
// A dropped session must close soon: its socket is closed, so every operation fails. A callback
// session closes at once; a fiber or coroutine once the job it is running ends (the query
// limits bound it), and serve returns then.
//
// Thread safety: sessions may close on any thread (closed() locks); everything else runs on
// `control`. The registry lock is taken once per accept and once per close, never on the
// request path, so a single-threaded driver pays one uncontended lock per connection.
#pragma once

#include <pools/server/app.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace pools::server {

class listener;

/// What the listener needs of a driver's session. The driver's session derives from it.
class session_base {
 public:
  session_base() = default;
  session_base(const session_base&) = delete;
  session_base& operator=(const session_base&) = delete;
  virtual ~session_base() = default;

  /// Called once, on `control`, after the session is registered: start the connection loop.
  virtual void start() = 0;
  /// Graceful shutdown, called on `control`: reach the connection on its own thread, strand,
  /// fiber or coroutine, call connection::shutdown() there, and cancel the read if it says so.
  virtual void shutdown() = 0;
  /// The deadline passed or a second signal came, called on `control`: close the socket (on the
  /// session's own executor) so that every operation fails and the session ends.
  virtual void drop() = 0;

 protected:
  /// The socket is closed: the listener forgets this session. Any thread; the caller must hold a
  /// reference to the session (its shared_ptr), since the listener's may be the last but one.
  /// Calling it again is harmless.
  void closed();

 private:
  friend class listener;
  listener* listener_ = nullptr;
};

class listener {
 public:
  /// How long accepting pauses when the process is out of descriptors (listener.cpp: why).
  static constexpr std::chrono::milliseconds accept_backoff{100};
  /// At most this many connections are accepted per readiness event (listener.cpp: drain()).
  static constexpr std::size_t accept_batch = 64;

  using executor = boost::asio::any_io_executor;
  using tcp = boost::asio::ip::tcp;
  using factory = std::function<std::shared_ptr<session_base>(tcp::socket)>;

  /// Listens on app.opts() (asio_support::listen: it prints "listening on ADDR:PORT"; throws if
  /// the port is taken), then starts accepting and waiting for signals on `control`.
  /// `socket_executor` picks the executor of each accepted socket (reactor: a strand per
  /// connection); empty means `control`.
  listener(app& app, executor control, factory make, std::function<executor()> socket_executor = {});
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  /// Blocks until done: a signal came and every session has closed (or was dropped and closed).
  void wait();

 private:
  friend class session_base;
  void accept();
  void adopt(tcp::socket socket);
  bool drain();
  static bool out_of_resources(const boost::system::error_code& ec);
  void pause_accepting(const boost::system::error_code& ec);
  void resume_accepting();
  void on_signal(int signo);
  void cut(const char* why);
  void forget(session_base* s);
  std::vector<std::shared_ptr<session_base>> snapshot();

  app& app_;
  executor control_;
  factory make_;
  std::function<executor()> socket_executor_;
  tcp::acceptor acceptor_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer backoff_;  // the pause after an accept out of descriptors

  std::mutex mutex_;
  std::condition_variable done_cv_;
  std::unordered_map<session_base*, std::shared_ptr<session_base>> sessions_;
  int signals_seen_ = 0;  // on `control` only
  bool cut_ = false;      // on `control` only
  bool paused_ = false;   // on `control` only: accepting is paused (out of descriptors)
  std::chrono::steady_clock::time_point paused_since_;  // on `control` only
  std::size_t retries_ = 0;                             // on `control` only: of this pause
  bool stopping_ = false;
  bool done_ = false;
};

}  // namespace pools::server
