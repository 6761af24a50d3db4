// SPDX-License-Identifier: MIT
// server/fuzz/fuzz_check.hpp — what the fuzz targets share: invariant checks that abort (so that
// libFuzzer saves the input as a crash), and where their messages go.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace pools::fuzz {

/// The descriptor invariant violations are written to: a copy of stderr taken before libFuzzer
/// runs, so that the message survives -close_fd_mask=2 (which silences the core's log lines).
inline int& report_fd() {
  static int fd = 2;
  return fd;
}

/// Call from LLVMFuzzerInitialize, before libFuzzer closes stderr.
inline void keep_stderr_for_reports() {
  const int fd = ::dup(2);
  if (fd >= 0) report_fd() = fd;
}

[[noreturn]] inline void fail(const char* file, int line, const char* condition, const std::string& detail) {
  const std::string message =
      fmt::format("\n==fuzz== invariant violated at {}:{}: {}\n==fuzz== {}\n", file, line, condition, detail);
  for (std::string_view rest = message; !rest.empty();) {
    const ssize_t n = ::write(report_fd(), rest.data(), rest.size());
    if (n <= 0) break;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  std::abort();
}

/// The first `n` bytes of `s`, printable (escapes for the rest), for messages.
inline std::string show(std::string_view s, std::size_t n = 300) {
  std::string out;
  for (const char c : s.substr(0, n)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\r')
      out += "\\r";
    else if (c == '\n')
      out += "\\n";
    else if (u < 0x20 || u >= 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  if (s.size() > n) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

}  // namespace pools::fuzz

/// Aborts with the condition, the place and a formatted detail when `condition` is false.
#define FUZZ_CHECK(condition, ...)                                                                     \
  do {                                                                                                 \
    if (!(condition)) ::pools::fuzz::fail(__FILE__, __LINE__, #condition, ::fmt::format(__VA_ARGS__)); \
  } while (0)

namespace pools::fuzz {

/// A new directory under the system's temporary folder, e.g. for a static root; every directory
/// made this way is removed when the process exits. Returns its canonical path.
inline std::filesystem::path scratch_directory(std::string_view prefix) {
  static std::vector<std::filesystem::path> made;
  std::string dir = (std::filesystem::temp_directory_path() / fmt::format("{}_XXXXXX", prefix)).string();
  FUZZ_CHECK(::mkdtemp(dir.data()) != nullptr, "mkdtemp {}", dir);
  if (made.empty()) {
    std::atexit([] {
      for (const auto& d : made) {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    });
  }
  made.push_back(std::filesystem::canonical(dir));
  return made.back();
}

/// Writes `content` to `p`, creating the folders on the way.
inline void write_file(const std::filesystem::path& p, std::string_view content) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
}

}  // namespace pools::fuzz
