// SPDX-License-Identifier: MIT
// server/src/static_files.hpp — GET /static/<path>: resolving a path under --root without ever
// leaving it, and reading the file in pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

namespace pools::server::detail {

/// An open regular file (owns the descriptor). Read piece by piece with read_at: a 100 MiB file
/// costs one chunk of memory, not 100 MiB.
class file_body {
 public:
  file_body() = default;
  file_body(int fd, std::uint64_t size) noexcept : fd_(fd), size_(size) {}
  file_body(file_body&& o) noexcept : fd_(std::exchange(o.fd_, -1)), size_(o.size_) {}
  file_body& operator=(file_body&& o) noexcept;
  file_body(const file_body&) = delete;
  file_body& operator=(const file_body&) = delete;
  ~file_body();

  bool is_open() const noexcept { return fd_ >= 0; }
  std::uint64_t size() const noexcept { return size_; }
  /// Reads up to out.size() bytes at `offset`. Returns the count; 0 at an unexpected end or an
  /// error (the file shrank or vanished after it was opened).
  std::size_t read_at(std::uint64_t offset, std::span<char> out) const noexcept;

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// Opens `relative` (percent-decoded, the part after "/static/") under `root` (canonical).
/// Returns nothing — the caller answers 404, never saying why — when the path is empty, has an
/// empty, "." or ".." segment (so "..", "%2e%2e" once decoded, and "//etc/passwd" are refused
/// before touching the disk), does not exist, resolves (symlinks included) outside `root`, or is
/// not a regular file (checked before the open, and again after it: a FIFO, a device or a
/// directory is never opened, and the open cannot block).
std::optional<file_body> open_static(const std::filesystem::path& root, std::string_view relative);

/// The Content-Type for a file name, by extension; application/octet-stream if unknown.
std::string_view content_type_for(std::string_view name) noexcept;

}  // namespace pools::server::detail
