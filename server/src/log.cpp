// SPDX-License-Identifier: MIT
#include <pools/server/log.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <string>

namespace pools::server {

namespace {
std::string& log_name() {
  static std::string name = "server";
  return name;
}
}  // namespace

void set_log_name(std::string name) {
  log_name() = std::move(name);
}

void log_message(log_level level, std::string_view message) {
  const auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  const auto ms = now.time_since_epoch().count() % 1000;
  const std::string_view tag = level == log_level::info   ? "info"
                               : level == log_level::warn ? "warn"
                                                          : "error";
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  const std::string line =
      fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z {} {}: {}\n", utc, ms, log_name(), tag, message);
  std::fwrite(line.data(), 1, line.size(), stderr);  // one call: lines from threads do not mix
}

void announce_listening(std::string_view address, unsigned port) {
  const bool v6 = address.find(':') != std::string_view::npos;
  const std::string where = v6 ? fmt::format("[{}]:{}", address, port) : fmt::format("{}:{}", address, port);
  fmt::print(stdout, "listening on {}\n", where);
  std::fflush(stdout);
  log_info("listening on {}", where);
}

std::string access_log_line(std::string_view peer, std::string_view method, std::string_view target,
                            unsigned version, int status, std::uint64_t bytes,
                            std::chrono::nanoseconds duration) {
  return fmt::format("{} \"{} {} HTTP/{}.{}\" {} {} {}us", peer.empty() ? "-" : peer, method, target,
                     version / 10, version % 10, status, bytes,
                     std::chrono::duration_cast<std::chrono::microseconds>(duration).count());
}

}  // namespace pools::server
