// SPDX-License-Identifier: MIT
// server/src/uri.hpp — request-target handling: split, percent-decode, query parameters, numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pools::server::detail {

struct split_target {
  std::string_view path;   ///< still percent-encoded
  std::string_view query;  ///< after '?', without it; empty if none
};

/// Splits an origin-form ("/a?b") or absolute-form ("http://host/a?b") request-target. Returns
/// nothing for any other form ("*", "host:port", "a/b"): the caller answers 400.
std::optional<split_target> split(std::string_view target);

/// Percent-decodes `in`. Returns nothing for a malformed escape ("%4", "%zz") or a decoded NUL,
/// which no path or value here may contain. '+' stays '+' (that rule is for HTML forms).
std::optional<std::string> percent_decode(std::string_view in);

/// The decoded value of the first `key=value` pair in `query`, or nothing if `key` is absent.
/// A present key with a malformed escape yields an empty optional-in-optional: {std::nullopt}.
std::optional<std::optional<std::string>> query_value(std::string_view query, std::string_view key);

/// A decimal unsigned integer in [0, max]: digits only (no sign, space, exponent), not empty.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max);

}  // namespace pools::server::detail
