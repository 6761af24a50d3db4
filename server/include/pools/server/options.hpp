// SPDX-License-Identifier: MIT
// pools/server/options.hpp — what the command line configures, and the protocol limits it does not.
//
// Every server_<variant> takes the same options (pools/server/cli.hpp parses them) and enforces the
// same limits, so the four drivers differ only in how they wait, never in what they accept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace pools::server {

/// Fixed protocol limits. They are constants, not options, so that every variant answers a given
/// request with the same status (the end-to-end test checks them on each driver).
namespace limits {
inline constexpr std::size_t max_target = 8 * 1024;         ///< a longer request-target gets 414
inline constexpr std::size_t max_header_fields = 8 * 1024;  ///< a longer header section gets 431
/// Parsed requests whose responses are not written yet; past it the connection stops parsing
/// (and reading) until responses drain, so a pipelining client cannot make the server buffer
/// without bound.
inline constexpr std::size_t max_pipeline = 64;
inline constexpr std::uint64_t max_fib_n = 35;  ///< fib(35) is ~30 million calls: seconds, not hours
inline constexpr std::uint64_t max_busy_ms = 1'000;
inline constexpr std::uint64_t max_sleep_ms = 10'000;
inline constexpr std::uint64_t busy_default_min_ms = 10;  ///< /busy without ?ms= spins a uniformly
inline constexpr std::uint64_t busy_default_max_ms = 20;  ///< random 10..20 ms (router.cpp)
/// After the last response of a closing connection the server half-closes and keeps reading (and
/// discarding) for at most this long or this many bytes, so that unread request bytes do not turn
/// the close into a TCP reset that destroys the response before the client read it.
inline constexpr std::chrono::milliseconds linger{2'000};
inline constexpr std::size_t linger_bytes = 1 << 20;
/// A static file is streamed in pieces of this size: never read whole into memory.
inline constexpr std::size_t file_chunk = 64 * 1024;
}  // namespace limits

/// The command-line options of server_<variant> (see `server_<variant> --help`).
struct options {
  std::string address = "127.0.0.1";               ///< the address to listen on; loopback by default
  std::uint16_t port = 8080;                       ///< 0 picks a free port, printed on stdout
  std::size_t threads = 1;                         ///< threads of the variant's pool (the driver decides how)
  std::filesystem::path root;                      ///< canonical --root; empty: /static/... answers 404
  std::uint64_t max_body = 1 << 20;                ///< larger request bodies get 413
  std::string strategy;                            ///< the driver's --strategy (empty when it has none)
  std::size_t max_connections = 10'000;            ///< connections past it get 503 and are closed
  std::chrono::milliseconds idle_timeout{30'000};  ///< keep-alive idle, and stalled body or write
  std::chrono::milliseconds header_timeout{10'000};    ///< from a request's first byte to its header end
  std::chrono::milliseconds shutdown_timeout{10'000};  ///< SIGTERM/SIGINT: drain deadline
  bool access_log = false;                             ///< one line per response on stderr
  std::string trace;  ///< --trace: the scheduler's events, written here on exit (pools/trace.hpp)
  /// --queue-limit: jobs waiting to start in the pool past which a job gets 503 + Retry-After on
  /// a connection that stays open (drivers whose program says bounded_queue); 0: unbounded.
  /// The command line's default is the --max-connections value.
  std::size_t queue_limit = 10'000;
};

}  // namespace pools::server
