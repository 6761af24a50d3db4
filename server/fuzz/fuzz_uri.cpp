// SPDX-License-Identifier: MIT
// server/fuzz/fuzz_uri.cpp — libFuzzer target: request-target handling (uri.hpp: split,
// percent_decode, query_value, parse_uint), the static-file resolution (open_static) and the
// router's path to it (route on GET <input>).
//
// The input is one string, given to every function. The static root is a temporary tree made at
// start-up, with files inside, a FIFO, and symlinks that point inside, outside (to a secret file
// beside the root), to a sibling directory whose name extends the root's ("rootx"), and to the
// root's parent. Checked, abort on violation:
//  * decoding is total (no crash, no sanitizer report on any bytes) and agrees with an
//    independent decoder: defined exactly when every '%' starts a two-hex-digit escape and nothing
//    decodes to NUL, with the same bytes; re-encoding round-trips: decode(encode(d)) == d and
//    encode(decode(e)) == e for the canonical encoding e;
//  * split: a path that starts with '/', has no '?' or '#', and (origin-form) path [ '?' query ]
//    is the target; query_value and parse_uint agree with independent implementations;
//  * a resolved path never escapes the root: whatever open_static opens (raw or decoded input,
//    and what GET /static/<...> answers) has a lexically normal relative path that stays under the
//    root, and is one of the regular files inside the root, byte for byte: never the secret, the
//    sibling's file, nor the FIFO (whose open would block); the plain names inside are found.
#include <pools/server/app.hpp>
#include <pools/server/options.hpp>

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "request.hpp"
#include "router.hpp"
#include "static_files.hpp"
#include "uri.hpp"

namespace {

namespace srv = pools::server;
namespace detail = pools::server::detail;
using pools::fuzz::show;

// ---------------------------------------------------------------------------------------------
// The static tree.

struct regular_file {
  std::string relative, content;
};

struct fixture {
  std::filesystem::path dir;   // removed at exit
  std::filesystem::path root;  // canonical
  std::vector<regular_file> inside;
  std::unique_ptr<srv::app> app;
};

fixture& the_fixture() {
  static fixture f;
  return f;
}

using pools::fuzz::write_file;

void make_fixture() {
  auto& f = the_fixture();
  f.dir = pools::fuzz::scratch_directory("pools_fuzz_uri");
  f.root = f.dir / "root";
  f.inside = {{"index.html", "<p>index</p>\n"},
              {"a/b.txt", "file a/b\n"},
              {"a/c d.txt", "file with a space\n"},
              {".hidden", "a dot file\n"},
              {"a%2e", "percent in a name\n"}};
  for (const auto& file : f.inside) write_file(f.root / file.relative, file.content);
  write_file(f.dir / "secret.txt", "SECRET outside the root\n");
  write_file(f.dir / "rootx" / "s.txt", "SIBLING whose name extends the root's\n");
  namespace fs = std::filesystem;
  fs::create_symlink("a/b.txt", f.root / "in_link");
  fs::create_symlink("../secret.txt", f.root / "out_link");
  fs::create_symlink("../rootx/s.txt", f.root / "sibling_link");
  fs::create_symlink("..", f.root / "up");
  fs::create_symlink(f.dir / "secret.txt", f.root / "a" / "abs_link");
  FUZZ_CHECK(::mkfifo((f.root / "fifo").c_str(), 0600) == 0, "mkfifo");
  srv::options o;
  o.root = f.root;
  o.threads = 1;
  f.app = std::make_unique<srv::app>(o, "fuzz");
}

// ---------------------------------------------------------------------------------------------
// Independent implementations.

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> reference_decode(std::string_view in) {
  std::string out;
  std::size_t i = 0;
  while (i < in.size()) {
    if (in[i] != '%') {
      out += in[i++];
    } else if (in.size() - i >= 3 && hex(in[i + 1]) >= 0 && hex(in[i + 2]) >= 0) {
      out += static_cast<char>(hex(in[i + 1]) << 4 | hex(in[i + 2]));
      i += 3;
    } else {
      return std::nullopt;
    }
  }
  if (out.find('\0') != std::string::npos) return std::nullopt;
  return out;
}

bool unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '/';
}

/// Every byte but unreserved ones and '/' as %XX (upper-case): the canonical encoding.
std::string encode(std::string_view in) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : in) {
    if (unreserved(c)) {
      out += c;
    } else {
      const auto u = static_cast<unsigned char>(c);
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 15];
    }
  }
  return out;
}

std::optional<std::optional<std::string>> reference_query_value(std::string_view query,
                                                                std::string_view key) {
  std::vector<std::string_view> pairs;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= query.size(); ++i) {
    if (i == query.size() || query[i] == '&') {
      pairs.push_back(query.substr(start, i - start));
      start = i + 1;
    }
  }
  if (query.empty()) pairs.clear();
  for (const auto pair : pairs) {
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != key) continue;
    return std::optional<std::string>(
        reference_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1)));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> reference_uint(std::string_view s, std::uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  unsigned __int128 v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > max) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// ---------------------------------------------------------------------------------------------
// The root is never escaped.

std::string read_all(const detail::file_body& f) {
  std::string content(static_cast<std::size_t>(f.size()), '\0');
  content.resize(f.read_at(0, {content.data(), content.size()}));
  return content;
}

/// `relative` names something under the root by its text alone: lexically normal, not absolute,
/// no ".." step, and root / relative normalised stays below the root.
bool lexically_inside(std::string_view relative) {
  const auto& root = the_fixture().root;
  const std::filesystem::path rel{std::string(relative)};
  if (rel.empty() || rel.is_absolute()) return false;
  for (const auto& step : rel)
    if (step == ".." || step == "." || step.empty()) return false;
  const auto joined = (root / rel).lexically_normal();
  const auto back = joined.lexically_relative(root);
  return !back.empty() && *back.begin() != ".." && joined.native().starts_with(root.native() + "/");
}

/// What open_static opened is one of the files inside the root, and its path was checked.
void check_opened(const detail::file_body& f, std::string_view relative, std::string_view how) {
  FUZZ_CHECK(lexically_inside(relative), "{}: open_static opened a path that leaves the root: {}", how,
             show(relative));
  const std::string content = read_all(f);
  FUZZ_CHECK(content.size() == f.size(), "{}: {} has size {} but {} bytes read", how, show(relative),
             f.size(), content.size());
  bool known = false;
  for (const auto& file : the_fixture().inside) known = known || file.content == content;
  FUZZ_CHECK(known, "{}: {} opened a file that is not inside the root: {}", how, show(relative),
             show(content));
}

void check_static(std::string_view relative, std::string_view how) {
  const auto& f = the_fixture();
  if (auto file = detail::open_static(f.root, relative)) check_opened(*file, relative, how);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pools::fuzz::keep_stderr_for_reports();
  make_fixture();
  // The plain names inside are found: a resolver that refused everything would pass the rest.
  for (std::string_view name : {"index.html", "a/b.txt", "a/c d.txt", ".hidden", "a%2e", "in_link"}) {
    const auto file = detail::open_static(the_fixture().root, name);
    FUZZ_CHECK(file.has_value(), "open_static does not find {} inside the root", name);
    check_opened(*file, name, "start-up");
  }
  for (std::string_view name :
       {"out_link", "sibling_link", "up/secret.txt", "a/abs_link", "fifo", "a", "../secret.txt"})
    FUZZ_CHECK(!detail::open_static(the_fixture().root, name), "open_static opens {}", name);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto& f = the_fixture();

  // Percent-decoding: total, the same as the reference, round-trips.
  const auto decoded = detail::percent_decode(input);
  const auto expected = reference_decode(input);
  FUZZ_CHECK(decoded == expected, "percent_decode({}) = {}, the reference says {}", show(input),
             decoded ? show(*decoded) : "nothing", expected ? show(*expected) : "nothing");
  if (decoded) {
    FUZZ_CHECK(decoded->size() <= input.size(), "decoding grew {}", show(input));
    const std::string canonical = encode(*decoded);
    const auto again = detail::percent_decode(canonical);
    FUZZ_CHECK(again == decoded, "decode(encode(d)) != d for d = {}", show(*decoded));
    FUZZ_CHECK(encode(*again) == canonical, "encode(decode(e)) != e for e = {}", show(canonical));
    if (input.find('%') == std::string_view::npos) FUZZ_CHECK(*decoded == input, "no escape, yet changed");
  }

  // split.
  if (const auto parts = detail::split(input)) {
    FUZZ_CHECK(!parts->path.empty() && parts->path.front() == '/', "split path {}", show(parts->path));
    FUZZ_CHECK(parts->path.find_first_of("?#") == std::string_view::npos, "split path {}", show(parts->path));
    if (input.front() == '/') {
      FUZZ_CHECK(input.find('#') == std::string_view::npos, "split accepted a fragment: {}", show(input));
      const bool has_query = input.find('?') != std::string_view::npos;
      const std::string back = std::string(parts->path) + (has_query ? "?" : "") + std::string(parts->query);
      FUZZ_CHECK(back == input, "split({}) does not put back together: {}", show(input), show(back));
    }
  } else if (input.starts_with('/')) {
    FUZZ_CHECK(input.find('#') != std::string_view::npos, "split refused the origin-form {}", show(input));
  }

  // Query values and numbers.
  for (std::string_view key : {"n", "ms"}) {
    const auto got = detail::query_value(input, key);
    const auto want = reference_query_value(input, key);
    FUZZ_CHECK(got == want, "query_value({}, {}) disagrees with the reference", show(input), key);
  }
  for (const std::uint64_t max :
       {std::uint64_t{35}, std::uint64_t{10'000}, std::numeric_limits<std::uint64_t>::max()})
    FUZZ_CHECK(detail::parse_uint(input, max) == reference_uint(input, max), "parse_uint({}, {})",
               show(input), max);

  // The static root: the raw bytes, the decoded ones, and the router's way there.
  check_static(input, "raw");
  if (decoded) check_static(*decoded, "decoded");
  detail::request req;
  req.verb = detail::method::get;
  req.method_name = "GET";
  req.target = "/static/" + std::string(input);
  std::minstd_rand rng(1);
  const auto routed = detail::route(*f.app, req, rng);
  if (routed.resp.file.is_open()) {
    // What the router resolved: the path part of the target, decoded if it has an escape (a
    // literal NUL, which no request-target Beast admits, then stays: open_static must still hold),
    // after "/static/".
    const auto parts = detail::split(req.target);
    FUZZ_CHECK(parts.has_value(), "GET {} served a file but is no path", show(req.target));
    const auto path = parts->path.find('%') == std::string_view::npos
                          ? std::optional<std::string>(parts->path)
                          : detail::percent_decode(parts->path);
    FUZZ_CHECK(path && path->starts_with("/static/"), "GET {} served a file", show(req.target));
    check_opened(routed.resp.file, std::string_view(*path).substr(8), "GET /static/");
  }
  (void)detail::content_type_for(input);
  return 0;
}
