// SPDX-License-Identifier: MIT
// session.hpp — exercise 06-callback-lifetime: a completion handler that outlives its object.
// docs/course/06-callback-lifetime.md has the story; scripts/grade-exercise.sh 06-callback-lifetime
// grades it (in the AddressSanitizer build).
//
// An echo session in the callback style of Boost.Asio (the reactor variant's style): start() reads;
// on_read() writes the bytes back in upper case; on_write() reads again; a read or write that fails
// (the peer closed, or the socket was closed under it) ends the loop. Nothing waits: every step is
// a completion handler that the io_context calls later, on its own.
//
// The bug: each handler captures a raw `this`. A handler runs *after* the call that started the
// operation has returned, maybe long after; nothing in `[this]` keeps the session alive until
// then. The given echo_server (echo_server.hpp) owns its sessions and destroys one when it kicks
// it out: closing the socket completes the pending read with operation_aborted, so its handler is
// queued in the io_context and runs later, on a session that is gone. It reads and writes freed
// memory: AddressSanitizer stops the program with "heap-use-after-free" and three stacks (the bad
// access in on_read, the free in echo_server::kick, the allocation in echo_server::add). Without
// ASan it touches whatever reused that memory, and the program goes on as if nothing happened.
//
// TODO(student): make every handler own the session until it has run, so that the session lives
// exactly as long as the last handler that can touch it, and not longer: derive from
// std::enable_shared_from_this<session> and capture `self = shared_from_this()` (by value) instead
// of `this`, as variants/reactor/include/pools/reactor/connection.hpp does with bind(). Do not
// store a handler, or a shared_ptr to the session, in the session itself: that is a cycle, and
// the check (session::live() must fall back to 0) and LeakSanitizer both report the leak. Keep
// the public interface: echo_server.hpp and the check use it.
#pragma once

#include <pools/reactor/counted.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <cctype>
#include <cstddef>
#include <utility>

namespace exercise {

using socket_type = boost::asio::local::stream_protocol::socket;

// counted<session>: session::live() is the number of sessions alive right now (the leak check).
class session : public pools::reactor::counted<session> {
 public:
  explicit session(socket_type socket) : socket_(std::move(socket)) {}

  /// Starts the read/echo loop. Called once, right after the session is made (by echo_server::add,
  /// after std::make_shared: from here on, shared_from_this() works; in the constructor it throws).
  void start() { read(); }

  /// Closes the socket: the pending read or write completes with operation_aborted, later.
  void stop() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  /// Bytes echoed so far.
  std::size_t echoed() const noexcept { return echoed_; }

 private:
  void read() {
    // TODO(student): `this` does not keep the session alive until the handler runs.
    socket_.async_read_some(boost::asio::buffer(buffer_),
                            [this](boost::system::error_code ec, std::size_t n) { on_read(ec, n); });
  }

  void on_read(boost::system::error_code ec, std::size_t n) {
    ++reads_;  // touches the session: after a kick, with [this], it is gone
    if (ec) {
      finished_ = true;  // end of stream, or stopped: no further operation, the loop ends here
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      buffer_[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(buffer_[i])));
    }
    // TODO(student): same here.
    boost::asio::async_write(
        socket_, boost::asio::buffer(buffer_.data(), n),
        [this](boost::system::error_code ec2, std::size_t written) { on_write(ec2, written); });
  }

  void on_write(boost::system::error_code ec, std::size_t n) {
    if (ec) {
      finished_ = true;
      return;
    }
    echoed_ += n;
    read();
  }

  socket_type socket_;
  std::array<char, 256> buffer_{};
  std::size_t echoed_ = 0;
  std::size_t reads_ = 0;
  bool finished_ = false;
};

}  // namespace exercise
