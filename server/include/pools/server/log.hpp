// SPDX-License-Identifier: MIT
// pools/server/log.hpp — the server's log lines (fmt, on stderr) and its one line on stdout.
//
//   stderr:  2024-05-01T12:00:00.123Z server_reactor info: listening on 127.0.0.1:8080
//   stdout:  listening on 127.0.0.1:8080          (exactly this, once, flushed: scripts wait for it)
//   access:  127.0.0.1:51234 "GET /plaintext HTTP/1.1" 200 13 21us   (--access-log, on stderr)
//
// Each line is written with one call, so lines from different threads do not interleave.
#pragma once

#include <fmt/core.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace pools::server {

enum class log_level : unsigned char { info, warn, error };

/// The name in every log line (server_<variant>); run() sets it before any thread starts.
void set_log_name(std::string name);
void log_message(log_level level, std::string_view message);

template <class... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  log_message(log_level::info, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  log_message(log_level::warn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log_message(log_level::error, fmt::format(f, std::forward<Args>(args)...));
}

/// Prints "listening on ADDRESS:PORT\n" on stdout and flushes it (and logs it). Tests and the
/// bench script read the port from this line when the server was started with --port 0.
void announce_listening(std::string_view address, unsigned port);

/// One access-log line (no newline): peer "METHOD TARGET HTTP/x.y" status bytes duration.
std::string access_log_line(std::string_view peer, std::string_view method, std::string_view target,
                            unsigned version, int status, std::uint64_t bytes,
                            std::chrono::nanoseconds duration);

}  // namespace pools::server
