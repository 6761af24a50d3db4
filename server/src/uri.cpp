// SPDX-License-Identifier: MIT
#include "uri.hpp"

#include <charconv>

namespace pools::server::detail {

namespace {
/// Whether `target` starts with `scheme` ("http://", lower case), in any case (RFC 3986 3.1).
bool has_scheme(std::string_view target, std::string_view scheme) {
  if (target.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    const char c =
        target[i] >= 'A' && target[i] <= 'Z' ? static_cast<char>(target[i] - 'A' + 'a') : target[i];
    if (c != scheme[i]) return false;
  }
  return true;
}
}  // namespace

std::optional<split_target> split(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (has_scheme(target, scheme)) {
      // absolute-form (RFC 9112 3.2.2): the authority ends at the first "/" or "?"; with no path,
      // the path is "/" ("http://h?q" is "/?q").
      const auto end = target.find_first_of("/?", scheme.size());
      if (end == std::string_view::npos) return split_target{"/", {}};
      if (target[end] == '?') {
        const auto query = target.substr(end + 1);
        if (query.find('#') != std::string_view::npos) return std::nullopt;
        return split_target{"/", query};
      }
      target = target.substr(end);
      break;
    }
  }
  if (target.empty() || target.front() != '/') return std::nullopt;
  if (target.find('#') != std::string_view::npos) return std::nullopt;  // clients never send one
  const auto q = target.find('?');
  if (q == std::string_view::npos) return split_target{target, {}};
  return split_target{target.substr(0, q), target.substr(q + 1)};
}

namespace {
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex_value(in[i + 1]);
      const int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    if (c == '\0') return std::nullopt;
    out.push_back(c);
  }
  return out;
}

std::optional<std::optional<std::string>> query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = pair.find('=');
    const auto name = pair.substr(0, eq);
    if (name != key) continue;
    const auto value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    return std::optional<std::optional<std::string>>(std::in_place, percent_decode(value));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace pools::server::detail
