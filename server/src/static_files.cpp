// SPDX-License-Identifier: MIT
#include "static_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace pools::server::detail {

file_body& file_body::operator=(file_body&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    size_ = o.size_;
  }
  return *this;
}

file_body::~file_body() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t file_body::read_at(std::uint64_t offset, std::span<char> out) const noexcept {
  for (;;) {
    const ssize_t n = ::pread(fd_, out.data(), out.size(), static_cast<off_t>(offset));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) return 0;
  }
}

std::optional<file_body> open_static(const std::filesystem::path& root, std::string_view relative) {
  if (root.empty() || relative.empty()) return std::nullopt;
  // Refuse by syntax first: no segment may be empty (an absolute path, "a//b", a trailing '/'),
  // "." or "..". What remains can only name something below root — unless a symlink points
  // out, which the realpath check below catches.
  for (std::size_t start = 0;;) {
    const auto slash = relative.find('/', start);
    const auto segment = relative.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (segment.empty() || segment == "." || segment == "..") return std::nullopt;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  const std::string candidate = root.native() + "/" + std::string(relative);
  const std::unique_ptr<char, decltype(&std::free)> real(::realpath(candidate.c_str(), nullptr), &std::free);
  if (!real) return std::nullopt;
  const std::string_view resolved(real.get());
  const std::string_view base(root.native());
  if (resolved.size() <= base.size() || resolved.substr(0, base.size()) != base ||
      (base.back() != '/' && resolved[base.size()] != '/'))
    return std::nullopt;
  // Only regular files are served (nginx, too, answers 404 for anything else). A FIFO, a device
  // or a socket is refused before it is opened: opening one can block (a FIFO waits for a writer)
  // or act on the device.
  struct stat st{};
  if (::lstat(real.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // Should something else have been swapped in since: O_NONBLOCK, so that the open cannot block
  // (it has no effect on a regular file), O_NOCTTY, and O_NOFOLLOW (the resolved path has no
  // symlink left: one swapped in fails the open instead of being followed); fstat then checks
  // what was opened.
  const int fd = ::open(real.get(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  return file_body(fd, static_cast<std::uint64_t>(st.st_size));
}

std::string_view content_type_for(std::string_view name) noexcept {
  struct entry {
    std::string_view ext, type;
  };
  static constexpr std::array<entry, 22> types{{
      {"html", "text/html; charset=utf-8"},
      {"htm", "text/html; charset=utf-8"},
      {"css", "text/css; charset=utf-8"},
      {"js", "text/javascript; charset=utf-8"},
      {"mjs", "text/javascript; charset=utf-8"},
      {"json", "application/json"},
      {"txt", "text/plain; charset=utf-8"},
      {"md", "text/markdown; charset=utf-8"},
      {"csv", "text/csv; charset=utf-8"},
      {"xml", "application/xml"},
      {"svg", "image/svg+xml"},
      {"png", "image/png"},
      {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},
      {"webp", "image/webp"},
      {"ico", "image/x-icon"},
      {"wasm", "application/wasm"},
      {"pdf", "application/pdf"},
      {"woff2", "font/woff2"},
      {"mp4", "video/mp4"},
      {"gz", "application/gzip"},
  }};
  const auto slash = name.rfind('/');
  const auto file = slash == std::string_view::npos ? name : name.substr(slash + 1);
  const auto dot = file.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return "application/octet-stream";
  const auto ext = file.substr(dot + 1);
  for (const auto& e : types) {
    if (e.ext.size() != ext.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < ext.size() && same; ++i) {
      const char c = ext[i] >= 'A' && ext[i] <= 'Z' ? static_cast<char>(ext[i] - 'A' + 'a') : ext[i];
      same = c == e.ext[i];
    }
    if (same) return e.type;
  }
  return "application/octet-stream";
}

}  // namespace pools::server::detail
