// SPDX-License-Identifier: MIT
#include "client.hpp"

#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <array>

#include "server_process.hpp"

namespace e2e {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

std::chrono::milliseconds io_timeout() {
  return std::chrono::milliseconds(10'000) * slowdown();
}

struct client::impl {
  asio::io_context io;
  beast::tcp_stream stream{io};
  beast::flat_buffer buffer;

  /// Runs one asynchronous operation to completion; tcp_stream closes the socket on expiry, so
  /// nothing blocks past `limit`.
  template <class Start>
  error_code run(Start&& start, std::chrono::milliseconds limit) {
    error_code result = asio::error::would_block;
    stream.expires_after(limit);
    start([&](error_code ec, std::size_t) { result = ec; });
    io.restart();
    io.run();
    return result;
  }
};

client::client(unsigned short port) : impl_(std::make_unique<impl>()) {
  const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), port);
  error_code result = asio::error::would_block;
  impl_->stream.expires_after(io_timeout());
  impl_->stream.async_connect(ep, [&](error_code ec) { result = ec; });
  impl_->io.run();
  REQUIRE_MESSAGE(!result, "connect to 127.0.0.1:", port, ": ", result.message());
}

client::~client() = default;

void client::send(std::string_view bytes) {
  const auto ec = impl_->run(
      [&](auto handler) {
        asio::async_write(impl_->stream, asio::buffer(bytes.data(), bytes.size()), handler);
      },
      io_timeout());
  REQUIRE_MESSAGE(!ec, "send: ", ec.message());
}

response client::read(bool head, std::uint64_t body_limit) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(body_limit);
  if (head) parser.skip(true);
  const auto ec = impl_->run(
      [&](auto handler) { http::async_read(impl_->stream, impl_->buffer, parser, handler); }, io_timeout());
  REQUIRE_MESSAGE(!ec, "read a response: ", ec.message());
  auto msg = parser.release();
  response r;
  r.status = static_cast<int>(msg.result_int());
  r.version = msg.version();
  for (const auto& f : msg) {
    std::string name(f.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    r.headers[name] = std::string(f.value());
  }
  r.keep_alive = msg.keep_alive();
  r.body = std::move(msg.body());
  return r;
}

bool client::closed_by_server(std::chrono::milliseconds limit) {
  if (impl_->buffer.size() != 0) return false;  // bytes already received and not read
  std::array<char, 512> scratch{};
  std::size_t got = 0;
  error_code result = asio::error::would_block;
  impl_->stream.expires_after(limit);
  impl_->stream.async_read_some(asio::buffer(scratch), [&](error_code ec, std::size_t n) {
    result = ec;
    got = n;
  });
  impl_->io.restart();
  impl_->io.run();
  if (!result) FAIL_CHECK("expected the server to close, got bytes: ", std::string(scratch.data(), got));
  return result == asio::error::eof || result == asio::error::connection_reset;
}

std::string get(std::string_view target, std::string_view extra) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + std::string(extra) + "\r\n";
}

response fetch(unsigned short port, std::string_view raw_request, bool head) {
  client c(port);
  return c.exchange(raw_request, head);
}

}  // namespace e2e
