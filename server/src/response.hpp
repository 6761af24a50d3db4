// SPDX-License-Identifier: MIT
// server/src/response.hpp — a response before serialisation, and the serialiser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "static_files.hpp"

namespace pools::server::detail {

struct response {
  int status = 200;
  std::string_view content_type = "text/plain";
  std::string owned_content_type;  ///< when not empty, the Content-Type (instead of content_type)
  std::string_view static_body;    ///< a body that outlives the response (constants)
  std::string body;                ///< an owned body; used when static_body is empty
  file_body file;                  ///< a file body, streamed; used when open
  std::string_view extra_headers;  ///< complete lines ("Allow: GET, HEAD\r\n"), constants only
  bool close = false;              ///< answer with Connection: close whatever the request said

  std::uint64_t content_length() const noexcept {
    if (file.is_open()) return file.size();
    return static_body.empty() ? body.size() : static_body.size();
  }
  std::string_view type() const noexcept {
    return owned_content_type.empty() ? content_type : std::string_view(owned_content_type);
  }
  std::string_view body_view() const noexcept { return static_body.empty() ? body : static_body; }
};

/// A short text/plain error response whose body is the status line's reason and `detail`.
response error_response(int status, std::string_view detail = {});

/// The reason phrase of a status ("OK", "Not Found").
std::string_view reason_phrase(int status) noexcept;

/// Appends the status line and header section of `r` to `out`: Server, Date, Content-Type,
/// Content-Length, Connection when needed (close, or keep-alive for HTTP/1.0), extra headers.
void serialize_head(std::string& out, const response& r, bool keep_alive, unsigned version);

/// The IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT"), formatted at most once per second
/// per thread.
std::string_view http_date();

}  // namespace pools::server::detail
