// SPDX-License-Identifier: MIT
// CHEAT (instructor only): the classic wrong fix. The handlers keep [this] and return at once on an
// error code, before touching the session: after a kick the aborted handler runs on a destroyed
// session but reads nothing of it, so AddressSanitizer has nothing to report. The session was
// still destroyed while its read was pending (with another kind of error, or a handler that logs,
// it is a use-after-free): the check requires it to be alive until its handler has run.
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
    socket_.async_read_some(boost::asio::buffer(buffer_),
                            [this](boost::system::error_code ec, std::size_t n) {
                              if (ec) return;  // "the session may be gone: do not touch it"
                              on_read(ec, n);
                            });
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
    boost::asio::async_write(socket_, boost::asio::buffer(buffer_.data(), n),
                             [this](boost::system::error_code ec2, std::size_t written) {
                               if (ec2) return;
                               on_write(ec2, written);
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
};

}  // namespace exercise
