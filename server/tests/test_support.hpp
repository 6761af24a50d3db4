// SPDX-License-Identifier: MIT
// Helpers for the core's unit tests: a driver that runs a connection on strings instead of a
// socket, a response parser (Beast's, compiled in test_support.cpp only), temporary directories.
#pragma once

#include <pools/server/app.hpp>
#include <pools/server/connection.hpp>

#include <cstddef>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace test {

namespace srv = pools::server;

struct response {
  int status = 0;
  unsigned version = 11;
  std::map<std::string, std::string> headers;  ///< names lower-cased
  std::string body;
  bool keep_alive = true;  ///< what the response says about the connection

  bool has(const std::string& name) const { return headers.count(name) != 0; }
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// Parses the consecutive responses in `bytes`. head[i] says response i answers a HEAD (no body
/// despite Content-Length). Interim 1xx responses are returned too. Fails the test case on
/// malformed bytes or a partial last response.
std::vector<response> parse_responses(std::string_view bytes, const std::vector<bool>& head = {});

/// A directory under the system temp dir, removed with everything in it on destruction.
struct temp_dir {
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  std::filesystem::path path;
  void write(const std::string& relative, std::string_view content) const;
};

/// Options for tests: short timeouts are set by the test that needs them.
srv::options options(const std::filesystem::path& root = {});

/// Plays the driver for one connection, without sockets: what it "reads" comes from send(),
/// what it writes is appended to `written`. Jobs run inline by default (fib: serially); with
/// hold_jobs they are kept in `held` for the test to complete in any order.
class driver {
 public:
  explicit driver(srv::app& app, bool hold_jobs = false);

  /// Delivers `input` in pieces of `step` bytes, pumping after each. Each piece must be
  /// wanted: the last pump must have said read.
  void send(std::string_view input, std::size_t step = std::numeric_limits<std::size_t>::max());
  /// The peer closed its side.
  void eof();
  /// Calls next() until it says read, wait or close; returns that.
  srv::action pump();

  /// Completes held job i (fib with the right value unless `value` is given).
  void complete(std::size_t i);
  void complete(std::size_t i, std::uint64_t value);

  std::vector<response> responses(const std::vector<bool>& head = {}) const {
    return parse_responses(written, head);
  }

  srv::connection conn;
  std::string written;
  std::vector<srv::job> held;
  std::vector<srv::job> jobs_seen;
  std::vector<std::size_t> write_sizes;
  srv::action last = srv::action::wait;
  bool half_closed = false;
  bool closed = false;

 private:
  bool hold_jobs_;
};

/// One request, one driver: the responses to `input` sent in pieces of `step` bytes.
std::vector<response> answers(srv::app& app, std::string_view input,
                              std::size_t step = std::numeric_limits<std::size_t>::max(),
                              const std::vector<bool>& head = {});

/// "GET <target> HTTP/1.1\r\nHost: t\r\n<extra>\r\n".
std::string get(std::string_view target, std::string_view extra = {});

}  // namespace test
