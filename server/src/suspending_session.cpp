// SPDX-License-Identifier: MIT
#include <pools/server/asio_support.hpp>
#include <pools/server/suspending_session.hpp>
#include <pools/server/worker_io.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <utility>

namespace pools::server {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

suspending_session::suspending_session(tcp::socket socket)
    : socket_(std::move(socket)), timer_(socket_.get_executor()), peer_(asio_support::peer(socket_)) {
  asio_support::tune(socket_);
}

void suspending_session::shutdown() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    int none = 0;
    if (self->stop_.compare_exchange_strong(none, 1) && self->op_ != nullptr &&
        self->op_->kind == op_kind::read) {
      self->op_->result.stopped = true;
      self->socket_.cancel();
    }
  });
}

void suspending_session::drop() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    error_code ignored;
    self->socket_.close(ignored);
    self->jobs_stop_.request_stop();  // jobs still running have nobody left to answer
  });
}

void suspending_session::post(operation& op) {
  // In place when the loop runs on the socket's worker — but only an asynchronous read or write,
  // whose completion Asio never runs inside the initiating call: the others complete inside
  // begin(), and resume() must not run before the loop has finished suspending.
  // (A read after a shutdown request completes inside begin() too.)
  const bool asynchronous = op.kind == op_kind::write || (op.kind == op_kind::read && stop_.load() != 1);
  if (asynchronous && worker_io::runs_on_this_thread(socket_.get_executor().context())) return begin(op);
  asio::post(socket_.get_executor(), [this, &op] { begin(op); });
}

void suspending_session::watch_peer(connection& conn) {
  if (!conn.watch_wanted()) return;
  auto start = [self = shared_from_this(), stop = conn.jobs_stop()]() mutable {
    self->jobs_stop_ = std::move(stop);
    auto& s = *self;
    s.peer_watch_.start(s.socket_, std::move(self), [&s] { s.jobs_stop_.request_stop(); });
  };
  // In place on the socket's worker, posted there from any other. In place is safe: the receive's
  // completion never runs inside it, and a client found gone at once only requests the stop.
  if (worker_io::runs_on_this_thread(socket_.get_executor().context())) return start();
  asio::post(socket_.get_executor(), std::move(start));
}

bool suspending_session::take_stop() {
  int requested = 1;
  return stop_.compare_exchange_strong(requested, 2);
}

void suspending_session::begin(operation& op) {
  auto resume = [this, &op](error_code ec, std::size_t n) {
    op_ = nullptr;
    op.result.ec = ec;
    op.result.n = n;
    op.resume();
  };
  error_code ignored;
  switch (op.kind) {
    case op_kind::read:
      if (stop_.load() == 1) {  // a shutdown came before this read: the loop takes it
        op.result.stopped = true;
        return resume(asio::error::operation_aborted, 0);
      }
      op_ = &op;
      watch();
      peer_watch_.read_starts(socket_);
      return socket_.async_read_some(asio_support::buffer(op.in), resume);
    case op_kind::write:
      op_ = &op;
      watch();
      return asio::async_write(socket_, asio_support::buffer(op.out), resume);
    case op_kind::half_close:
      socket_.shutdown(tcp::socket::shutdown_send, ignored);
      return resume({}, 0);
    case op_kind::close: {
      timer_.cancel();
      socket_.close(ignored);
      auto self = shared_from_this();  // the listener may hold the last reference but this one
      closed();
      return resume({}, 0);
    }
  }
}

// The watchdog, re-armed only when the deadline moved earlier (see callback_session.cpp). The
// operation in flight carries its deadline: the connection does not change while it waits.
void suspending_session::watch() {
  if (armed_ && op_->deadline >= timer_.expiry()) return;
  armed_ = true;
  timer_.expires_at(op_->deadline);
  timer_.async_wait([self = shared_from_this()](error_code ec) {
    if (ec) return;  // re-armed (operation_aborted) or closed
    self->armed_ = false;
    if (self->op_ == nullptr) return;  // the next operation re-arms
    if (connection::clock::now() < self->op_->deadline) return self->watch();
    self->op_->result.expired = true;
    self->socket_.cancel();
  });
}

}  // namespace pools::server
