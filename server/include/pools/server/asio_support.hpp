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

#include <span>
#include <string>

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

}  // namespace pools::server::asio_support
