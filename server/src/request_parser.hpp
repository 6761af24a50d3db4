// SPDX-License-Identifier: MIT
// server/src/request_parser.hpp — request bytes in, requests out: Boost.Beast's HTTP/1.1 parser
// behind a light interface, so that Beast is compiled in exactly one translation unit of the
// core (request_parser.cpp) and nothing else includes it.
//
// Beyond what Beast checks (syntax, Content-Length vs Transfer-Encoding, conflicting
// Content-Length, chunk framing, body limit), it enforces the server's own rules: request-target
// <= limits::max_target (414), header section <= limits::max_header_fields (431), Host present
// on HTTP/1.1, unique, and a valid uri-host [":" port] (400), Transfer-Encoding exactly "chunked"
// (a final "chunked" behind another coding: 501; chunked not final or twice: 400, as a body the
// server cannot frame is a request-smuggling vector) and never on HTTP/1.0 (400), an expectation
// other than 100-continue 417, HTTP/1.2..1.9 served as HTTP/1.1 and any other major version 505,
// a bare LF where Beast waits for a line's end 400 (Beast would wait for a CRLF until the
// timeout), and trailer fields ignored (never merged into the header section).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "request.hpp"

namespace pools::server::detail {

class request_parser {
 public:
  explicit request_parser(std::uint64_t max_body);
  ~request_parser();
  request_parser(const request_parser&) = delete;
  request_parser& operator=(const request_parser&) = delete;

  /// Parses from the start of `bytes` (the buffered input not yet consumed). Returns how many
  /// bytes were consumed; the rest must be presented again (with more after it) if the request is
  /// not done, or belongs to the next request if it is. Empty lines before a request are skipped.
  std::size_t feed(std::string_view bytes);

  /// Bytes of the current request have been consumed (it has started).
  bool started() const noexcept;
  bool header_done() const noexcept;
  /// The header asked for "100 Continue" and the body has not arrived yet.
  bool awaiting_body_with_continue() const noexcept;
  bool done() const noexcept;
  /// 0, or the status of the error that stopped parsing (400, 413, 414, 417, 431, 501, 505). The stream
  /// cannot be parsed further after an error: answer and close.
  int error_status() const noexcept;
  std::string_view error_reason() const noexcept;

  /// The complete request (done() must be true); the parser is ready for the next one.
  request take();
  /// Forgets the current request, complete or not.
  void reset() noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace pools::server::detail
