// SPDX-License-Identifier: MIT
// session.hpp — exercise 06-callback-lifetime, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_06-callback-lifetime_cheat_ proves the check fails it.
//
// THE CHEAT: no use-after-free, because the session never dies: start() stores a shared_ptr to the
// session in the session itself (a cycle), and a live() of its own says 0 sessions are alive, so
// the old check, which asked session::live(), saw none. The check now counts the sessions itself,
// through the allocator echo_server.hpp makes them with.
//
// Every completion handler captures `self = shared_from_this()` by value: while an operation is
// pending, its handler (stored in the io_context) is an owner of the session. The server's kick
// drops one owner; the pending read's handler is another, so the session lives until that handler
// has run with operation_aborted and not re-armed anything; the last shared_ptr then goes with the
// handler and the session is destroyed. No handler is stored in the session, so there is no cycle:
// the session lives exactly as long as the last handler that can touch it.
#pragma once

#include <pools/reactor/counted.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <boost/system/error_code.hpp>

#include <array>
#include <cctype>
#include <cstddef>
#include <memory>
#include <utility>

namespace exercise {

using socket_type = boost::asio::local::stream_protocol::socket;

// counted<session>: session::live() is the number of sessions alive right now (the leak check).
class session : public std::enable_shared_from_this<session>, public pools::reactor::counted<session> {
 public:
  explicit session(socket_type socket) : socket_(std::move(socket)) {}

  /// Starts the read/echo loop. Called once, right after the session is made (by echo_server::add,
  /// after std::make_shared: from here on, shared_from_this() works; in the constructor it throws).
  void start() {
    self_ = shared_from_this();  // THE CHEAT: the session owns itself, so it is never freed
    read();
  }

  /// THE CHEAT: hides counted<session>::live().
  static std::size_t live() noexcept { return 0; }

  /// Closes the socket: the pending read or write completes with operation_aborted, later.
  void stop() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  /// Bytes echoed so far.
  std::size_t echoed() const noexcept { return echoed_; }

 private:
  void read() {
    // The handler owns the session until it has run (or been destroyed unrun).
    socket_.async_read_some(
        boost::asio::buffer(buffer_),
        [self = shared_from_this()](boost::system::error_code ec, std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(boost::system::error_code ec, std::size_t n) {
    ++reads_;  // safe: the handler that called us owns the session
    if (ec) {
      finished_ = true;  // end of stream, or stopped: no further operation, the loop ends here
      return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      buffer_[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(buffer_[i])));
    }
    // Same here: the session and buffer_, which the write reads from, live until the write is over.
    boost::asio::async_write(socket_, boost::asio::buffer(buffer_.data(), n),
                             [self = shared_from_this()](boost::system::error_code ec2, std::size_t written) {
                               self->on_write(ec2, written);
                             });
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
  std::shared_ptr<session> self_;
};

}  // namespace exercise
