// SPDX-License-Identifier: MIT
#include <pools/server/asio_support.hpp>
#include <pools/server/callback_session.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <utility>

namespace pools::server {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

callback_session::callback_session(tcp::socket socket, app& app)
    : socket_(std::move(socket)), timer_(socket_.get_executor()), conn_(app, asio_support::peer(socket_)) {
  asio_support::tune(socket_);
}

void callback_session::start() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->pump(); });
}

void callback_session::shutdown() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    if (!self->closed_ && self->conn_.shutdown()) self->socket_.cancel();  // an idle read: it ends
  });
}

void callback_session::drop() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
}

void callback_session::finish(const job& j, std::uint64_t value, std::string error) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), j, value, error = std::move(error)] {
    if (self->closed_) return;  // dropped while the job ran
    if (error.empty())
      self->conn_.complete(j, value);
    else
      self->conn_.fail(j, error);
    self->pump();
  });
}

// One step per call, resumed by each completion.
void callback_session::pump() {
  while (!closed_) {
    switch (conn_.next()) {
      case action::run:
        run_job(conn_.take_job());
        break;
      case action::read:
        return read();
      case action::write:
        return write();
      case action::half_close: {
        error_code ignored;
        socket_.shutdown(tcp::socket::shutdown_send, ignored);
        break;
      }
      case action::wait:
        return watch_peer();
      case action::close:
        return close();
    }
  }
}

void callback_session::read() {
  watch();
  peer_watch_.read_starts(socket_);
  socket_.async_read_some(asio_support::buffer(conn_.read_buffer()),
                          [self = shared_from_this()](error_code ec, std::size_t n) {
                            if (self->closed_) return;
                            if (ec)
                              self->conn_.end_of_input();
                            else
                              self->conn_.commit(n);
                            self->pump();
                          });
}

// While jobs run nothing reads the socket: the client leaving is noticed by a peek, and stops them
// (their completions then drive the loop to close).
void callback_session::watch_peer() {
  if (!conn_.watch_wanted()) return;
  peer_watch_.start(socket_, shared_from_this(), [this] { conn_.jobs_stop().request_stop(); });
}

void callback_session::write() {
  watch();
  asio::async_write(socket_, asio_support::buffer(conn_.output()),
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
void callback_session::watch() {
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

void callback_session::close() {
  if (closed_.exchange(true, std::memory_order_relaxed)) return;
  conn_.jobs_stop().request_stop();  // jobs still running have nobody left to answer
  timer_.cancel();
  error_code ignored;
  socket_.close(ignored);
  auto self = shared_from_this();  // the listener may hold the last reference but this one
  closed();
}

}  // namespace pools::server
