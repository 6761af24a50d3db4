// SPDX-License-Identifier: MIT
#include "response.hpp"

#include <fmt/format.h>

#include <ctime>

namespace pools::server::detail {

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

response error_response(int status, std::string_view detail) {
  response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body.reserve(64);
  r.body.append(reason_phrase(status));
  if (!detail.empty()) r.body.append(": ").append(detail);
  r.body.push_back('\n');
  return r;
}

std::string_view http_date() {
  // Per thread, so that no lock or atomic is needed; a thread formats at most once a second.
  thread_local std::time_t cached_second = -1;
  thread_local char buffer[40];
  thread_local std::size_t length = 0;
  const std::time_t now = std::time(nullptr);
  if (now != cached_second) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    length = std::strftime(buffer, sizeof buffer, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached_second = now;
  }
  return {buffer, length};
}

void serialize_head(std::string& out, const response& r, bool keep_alive, unsigned version) {
  const fmt::format_int status(r.status);
  const fmt::format_int length(r.content_length());
  out.append("HTTP/1.1 ").append(status.data(), status.size()).push_back(' ');
  out.append(reason_phrase(r.status)).append("\r\nServer: pools\r\nDate: ").append(http_date());
  out.append("\r\nContent-Type: ").append(r.type());
  out.append("\r\nContent-Length: ").append(length.data(), length.size()).append("\r\n");
  if (!keep_alive)
    out.append("Connection: close\r\n");
  else if (version == 10)
    out.append("Connection: keep-alive\r\n");
  out.append(r.extra_headers).append("\r\n");
}

}  // namespace pools::server::detail
