// SPDX-License-Identifier: MIT
// pools/server/asio_support.hpp — the few Boost.Asio helpers every driver needs, so that drivers
// differ only in how they wait. Header-only on purpose: it is compiled inside each driver's own
// translation unit, with that driver's Asio configuration; the core library never includes it
// (the core has no sockets).
#pragma once

#include <pools/server/log.hpp>
#include <pools/server/options.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/socket_base.hpp>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace pools::server::asio_support {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// SO_REUSEPORT: several acceptors (one per thread) share one port and the kernel spreads the
/// connections between them. Asio has no named option for it.
using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

/// An acceptor bound to options.address:port and listening. With reuse_port, several may bind
/// the same port: open the first with options.port (0 picks one), the others with the first's
/// local_endpoint().port(). Throws boost::system::system_error (port in use, bad address).
template <class ExecutorOrContext>
tcp::acceptor open_acceptor(ExecutorOrContext&& ex, const options& opts, unsigned short port,
                            bool share_port = false) {
  tcp::endpoint endpoint(asio::ip::make_address(opts.address), port);
  tcp::acceptor acceptor(ex);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  if (share_port) acceptor.set_option(reuse_port(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  return acceptor;
}

/// Prints the one stdout line ("listening on ADDRESS:PORT") for this acceptor.
inline void announce(const tcp::acceptor& acceptor) {
  const auto endpoint = acceptor.local_endpoint();
  announce_listening(endpoint.address().to_string(), endpoint.port());
}

/// open_acceptor on options.port, announced: what a driver with one acceptor calls.
template <class ExecutorOrContext>
tcp::acceptor listen(ExecutorOrContext&& ex, const options& opts) {
  auto acceptor = open_acceptor(std::forward<ExecutorOrContext>(ex), opts, opts.port);
  announce(acceptor);
  return acceptor;
}

/// Disables Nagle: a response must leave now, not wait for the client's ACK of the previous one.
inline void tune(tcp::socket& socket) {
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
}

/// "ip:port" of the peer, for the access log ("-" if the peer is already gone).
inline std::string peer(const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "-";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

/// The connection's buffers as Asio buffers.
inline asio::mutable_buffer buffer(std::span<char> s) {
  return {s.data(), s.size()};
}
inline asio::const_buffer buffer(std::span<const char> s) {
  return {s.data(), s.size()};
}

/// Watches a socket, while its connection's jobs run and nothing reads it, for the client leaving
/// (connection.hpp, "The client leaving"). A one-byte MSG_PEEK receive: it completes when the
/// client closes (EOF), resets, or sends more, and takes no byte from the connection. Used by the
/// session bases only, on the socket's executor (one thread at a time).
class peer_watch {
 public:
  /// Starts a watch unless one is in flight, or the last one found bytes and no read has started
  /// since (a peek would find them again at once, forever). `on_gone()` runs on the socket's
  /// executor once the client has gone; `keep` (the session's shared_ptr) is held until then.
  template <class Keep, class OnGone>
  void start(tcp::socket& socket, Keep keep, OnGone on_gone) {
    if (pending_ || found_at_ == reads_) return;
    // First a peek that never blocks: Asio's reactor tries a receive at once only when the last
    // one did not drain the socket, so a FIN that came in with the request (connect, send, close)
    // would otherwise wait for a readiness edge that has already passed.
    char byte = 0;
    const auto n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return void(found_at_ = reads_);  // bytes waiting: the client is there
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return on_gone();
    pending_ = true;
    socket.async_receive(asio::buffer(&byte_, 1), tcp::socket::message_peek,
                         [this, keep = std::move(keep), on_gone = std::move(on_gone), at = reads_](
                             boost::system::error_code ec, std::size_t) mutable {
                           pending_ = false;
                           if (!ec) return void(found_at_ = at);
                           if (ec != asio::error::operation_aborted) on_gone();  // EOF or reset
                         });
  }
  /// A read of the connection is about to start (nothing else is in flight on the socket): a watch
  /// still pending is cancelled first, and whatever one found is now being read. A read must not
  /// queue behind a peek: when the peek finds EOF, a receive shorter than its buffer, Asio's
  /// reactor takes the socket as drained and does not try the read behind it until the next
  /// readiness edge, which never comes.
  void read_starts(tcp::socket& socket) {
    ++reads_;
    if (!pending_) return;
    boost::system::error_code ignored;
    socket.cancel(ignored);  // the peek completes with operation_aborted
  }

 private:
  bool pending_ = false;
  std::uint64_t reads_ = 0, found_at_ = ~std::uint64_t{0};
  char byte_ = 0;
};

}  // namespace pools::server::asio_support
