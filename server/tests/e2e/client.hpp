// SPDX-License-Identifier: MIT
// A Boost.Beast HTTP client for the end-to-end tests: raw bytes out (so malformed requests can be
// sent), Beast-parsed responses in, every operation bounded by a timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace e2e {

struct response {
  int status = 0;
  unsigned version = 11;                       ///< of the status line: 11 for "HTTP/1.1"
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
  bool keep_alive = true;
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// The default bound of one client operation (longer under sanitizers).
std::chrono::milliseconds io_timeout();

class client {
 public:
  /// Connects to 127.0.0.1:port (fails the test case if it cannot).
  explicit client(unsigned short port);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  void send(std::string_view bytes);
  /// Reads one response (1xx included). `head`: it answers a HEAD (no body).
  response read(bool head = false, std::uint64_t body_limit = 16u << 20);
  /// Waits until the server closes the connection (EOF or reset) within `limit`, having
  /// received no more bytes. Returns false on a timeout or on unexpected bytes.
  bool closed_by_server(std::chrono::milliseconds limit);
  /// Sends `bytes` and reads one response.
  response exchange(std::string_view bytes, bool head = false) {
    send(bytes);
    return read(head);
  }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// "GET target HTTP/1.1\r\nHost: 127.0.0.1\r\n<extra>\r\n"
std::string get(std::string_view target, std::string_view extra = {});

/// One request on a fresh connection.
response fetch(unsigned short port, std::string_view raw_request, bool head = false);

/// How long f() took, in whole milliseconds (for the timeout checks).
template <class F>
std::chrono::milliseconds timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
}

}  // namespace e2e
