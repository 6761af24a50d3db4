// SPDX-License-Identifier: MIT
#include <pools/server/asio_support.hpp>
#include <pools/server/listener.hpp>
#include <pools/server/log.hpp>

#include <boost/asio/post.hpp>

#include <cerrno>
#include <csignal>
#include <utility>

namespace pools::server {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

void session_base::closed() {
  if (listener_ != nullptr) listener_->forget(this);
}

listener::listener(app& app, executor control, factory make, std::function<executor()> socket_executor)
    : app_(app),
      control_(std::move(control)),
      make_(std::move(make)),
      socket_executor_(std::move(socket_executor)),
      acceptor_(asio_support::listen(control_, app.opts())),
      signals_(control_, SIGINT, SIGTERM),
      deadline_(control_),
      backoff_(control_) {
  // Non-blocking in user mode: drain()'s synchronous accept() answers would_block when the queue
  // is empty instead of waiting (async_accept does not care).
  acceptor_.non_blocking(true);
  // Posted: the acceptor and the signal set are used on `control` only, and a multi-threaded
  // driver's threads may already be running it.
  asio::post(control_, [this] {
    accept();
    signals_.async_wait([this](error_code ec, int signo) {
      if (!ec) on_signal(signo);
    });
  });
}

listener::~listener() = default;

void listener::accept() {
  auto on_accept = [this](error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;  // `socket` closes
    if (out_of_resources(ec)) return pause_accepting(ec);                      // no accept() now
    if (ec) {
      log_warn("accept: {}", ec.message());  // e.g. a client that reset before it was accepted
    } else {
      if (paused_) resume_accepting();
      adopt(std::move(socket));
      if (!drain()) return;  // paused: out of descriptors
    }
    accept();
  };
  if (socket_executor_)
    acceptor_.async_accept(socket_executor_(), std::move(on_accept));
  else
    acceptor_.async_accept(std::move(on_accept));
}

void listener::adopt(tcp::socket socket) {
  auto s = make_(std::move(socket));
  s->listener_ = this;
  {
    std::lock_guard lock(mutex_);
    sessions_.emplace(s.get(), s);
  }
  s->start();  // after registering: a session may close (and be forgotten) at once
}

// One readiness event, many connections: when 10,000 clients connect at once, the listen queue
// (net.core.somaxconn, 4,096 on Debian 12) fills faster than one accept per trip through the event
// loop empties it, and the kernel drops each handshake that completes while it is full
// (TcpExt ListenOverflows); its client retries a second later, a request that takes a second.
// So after each accept the rest of the queue is taken at once, synchronously (the acceptor is
// non-blocking), up to accept_batch, before the event loop runs anything else.
bool listener::drain() {
  for (std::size_t i = 1; i < accept_batch; ++i) {
    error_code ec;
    tcp::socket socket = socket_executor_ ? acceptor_.accept(socket_executor_(), ec) : acceptor_.accept(ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) return true;  // queue empty
    if (out_of_resources(ec)) {
      pause_accepting(ec);
      return false;
    }
    if (ec) {
      log_warn("accept: {}", ec.message());
      continue;
    }
    adopt(std::move(socket));
  }
  return true;
}

bool listener::out_of_resources(const error_code& ec) {
  // The process is out of descriptors (EMFILE), the system is (ENFILE), or the kernel has no
  // memory for another socket (ENOBUFS, ENOMEM). None of these is the client's fault, and none
  // clears by retrying at once.
  if (ec.category() != boost::system::system_category()) return false;
  const int e = ec.value();
  return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

// Why a pause, and not "log it and accept again" as for other errors: the connection stays in the
// listen queue, so Asio's next accept() (tried at once, before waiting for epoll) fails the same
// way, at once, in a loop that burns the thread and writes a log line each time (hundreds of
// thousands a second). What frees a descriptor is one of the server's own connections closing,
// and that needs the event loop. So, as nginx does (on EMFILE/ENFILE it disables its accept
// events and sets a timer, accept_mutex_delay, 500 ms by default): stop accepting, serve the open
// connections, try again after accept_backoff. 100 ms: a retry is one accept() call, ten a second
// cost nothing, and the server takes new connections within 0.1 s of a descriptor coming free.
// Clients wait in the listen queue meanwhile (its length is the backlog passed to listen():
// SOMAXCONN, capped by net.core.somaxconn); past that, the kernel drops their SYNs and they
// retry a second later.
void listener::pause_accepting(const error_code& ec) {
  if (!paused_) {  // one line per episode, however many retries it takes
    paused_ = true;
    paused_since_ = std::chrono::steady_clock::now();
    retries_ = 0;
    std::size_t open = 0;
    {
      std::lock_guard lock(mutex_);
      open = sessions_.size();
    }
    log_warn("accept: {}: pausing, retrying every {} ms; the {} open connections are served meanwhile",
             ec.message(), accept_backoff.count(), open);
  }
  ++retries_;
  backoff_.expires_after(accept_backoff);
  backoff_.async_wait([this](error_code e) {
    if (!e && acceptor_.is_open()) accept();  // cancelled (a signal): stay stopped
  });
}

void listener::resume_accepting() {
  paused_ = false;
  const auto paused_for =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - paused_since_);
  log_info("accept: accepting again after {} ms ({} retries)", paused_for.count(), retries_);
}

std::vector<std::shared_ptr<session_base>> listener::snapshot() {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<session_base>> out;
  out.reserve(sessions_.size());
  for (const auto& [_, s] : sessions_) out.push_back(s);
  return out;
}

void listener::on_signal(int signo) {
  if (++signals_seen_ > 1) return cut("a second signal");  // stop at once
  signals_.async_wait([this](error_code ec, int s) {
    if (!ec) on_signal(s);
  });
  acceptor_.close();
  backoff_.cancel();  // a paused accept stays stopped
  std::vector<std::shared_ptr<session_base>> open;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (const auto& [_, s] : sessions_) open.push_back(s);
  }
  log_info("signal {}: stop accepting, finishing {} connections", signo, open.size());
  // Outside the lock: a session may close (and call forget()) while it is being told.
  for (const auto& s : open) s->shutdown();
  deadline_.expires_after(app_.opts().shutdown_timeout);
  deadline_.async_wait([this](error_code ec) {
    if (!ec) cut("shutdown deadline");
  });
  forget(nullptr);  // no session was open: done now
}

void listener::cut(const char* why) {
  if (cut_) return;  // the deadline after a second signal, or the other way round
  cut_ = true;
  deadline_.cancel();
  const auto open = snapshot();
  if (open.empty()) return;
  log_warn("{}: dropping {} connections", why, open.size());
  for (const auto& s : open) s->drop();
}

void listener::forget(session_base* s) {
  decltype(sessions_)::node_type node;  // freed after the unlock: no session dies under the lock
  std::lock_guard lock(mutex_);
  if (s != nullptr) {
    node = sessions_.extract(s);
    if (node.empty()) return;  // a second closed()
  }
  if (!stopping_ || done_ || !sessions_.empty()) return;
  done_ = true;
  // Whatever thread the last session closed on, the listener's own objects are touched on
  // `control` only. Once this has run nothing of the listener is pending there: a driver's
  // io_context::run() returns, a reactor's executor can drain.
  asio::post(control_, [this] {
    deadline_.cancel();
    backoff_.cancel();
    signals_.cancel();
  });
  done_cv_.notify_all();
}

void listener::wait() {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return done_; });
}

}  // namespace pools::server
