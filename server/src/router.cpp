// SPDX-License-Identifier: MIT
#include "router.hpp"

#include <pools/server/app.hpp>
#include <pools/server/work.hpp>

#include <fmt/format.h>

#include <utility>

#include "json_body.hpp"
#include "uri.hpp"

namespace pools::server::detail {

namespace {

constexpr std::string_view allow_get = "Allow: GET, HEAD\r\n";
constexpr std::string_view allow_post = "Allow: POST\r\n";

response text(std::string_view body, std::string_view type) {
  response r;
  r.content_type = type;
  r.static_body = body;
  return r;
}

/// A JSON response of one key and a value (the /stats body is app::stats_json()); json_body.hpp
/// says why the value is built in a json_body.
template <class... KeyValues>
response json(const KeyValues&... key_values) {
  json_body body;
  auto add = [&body](const auto& key_value) { body.value[key_value.first] = key_value.second; };
  (add(key_values), ...);
  response r;
  r.content_type = "application/json";
  r.body = body.dump();
  return r;
}

response method_not_allowed(std::string_view allow) {
  response r = error_response(405);
  r.extra_headers = allow;
  return r;
}

/// ?key=value as a number in [0, max]: the number, or a 400 response explaining the problem.
struct number_or_error {
  std::optional<std::uint64_t> value;
  std::optional<response> error;
};
number_or_error query_number(std::string_view query, std::string_view key, std::uint64_t max, bool required) {
  const auto raw = query_value(query, key);
  if (!raw) {
    if (required) return {std::nullopt, error_response(400, fmt::format("missing ?{}=", key))};
    return {};
  }
  const auto number = *raw ? parse_uint(**raw, max) : std::nullopt;
  if (!number)
    return {std::nullopt, error_response(400, fmt::format("{} must be an integer in 0..{}", key, max))};
  return {number, std::nullopt};
}

routed job_route(job::kind kind, std::uint64_t arg) {
  routed out;
  out.work = job{kind, arg, 0, {}};
  return out;
}

}  // namespace

routed route(const app& app, request& req, std::minstd_rand& rng) {
  if (req.verb == method::other) return {error_response(501, req.method_name), std::nullopt};
  const auto parts = split(req.target);
  if (!parts) return {error_response(400, "request-target must be a path"), std::nullopt};
  // Most paths have no escape: a plain copy then (Beast admits no control byte in a target).
  const auto path = parts->path.find('%') == std::string_view::npos ? std::optional<std::string>(parts->path)
                                                                    : percent_decode(parts->path);
  if (!path) return {error_response(400, "bad percent-encoding"), std::nullopt};
  const bool get = req.verb == method::get || req.verb == method::head;

  if (*path == "/echo") {
    if (req.verb != method::post) return {method_not_allowed(allow_post), std::nullopt};
    response r;
    r.content_type = "application/octet-stream";
    r.owned_content_type = std::move(req.content_type);  // echoed, when the request had one
    r.body = std::move(req.body);
    return {std::move(r), std::nullopt};
  }

  const bool known = *path == "/plaintext" || *path == "/json" || *path == "/" || *path == "/stats" ||
                     *path == "/fib" || *path == "/busy" || *path == "/sleep" ||
                     path->starts_with("/static/");
  if (!known) return {error_response(404), std::nullopt};
  if (!get) return {method_not_allowed(allow_get), std::nullopt};

  if (*path == "/plaintext") return {text("Hello, World!", "text/plain"), std::nullopt};
  // TechEmpower's JSON test: the object is built and serialised for each request, not cached.
  // Its price (2026-11-24, tree of commit 974eaad, the 2-vCPU VM): building and dumping this
  // ordered_json costs 0.44-0.61 us against 0.02 us for copying the literal it replaced (a loop
  // of 2 million, g++ -O2); wrk -t1 -c32 -d4s on /json of server_coroutines --threads 1, before
  // and after alternated 3 times, did not see it (28.3/30.6/32.1k req/s before, 25.8/31.0/30.6k
  // after: within that run's noise).
  if (*path == "/json") return {json(std::pair("message", "Hello, World!")), std::nullopt};
  if (*path == "/") return {text(index_page(), "text/html; charset=utf-8"), std::nullopt};
  if (*path == "/stats") {
    response r;
    r.content_type = "application/json";
    r.body = app.stats_json();
    return {std::move(r), std::nullopt};
  }
  if (*path == "/fib") {
    auto n = query_number(parts->query, "n", limits::max_fib_n, true);
    if (n.error) return {std::move(*n.error), std::nullopt};
    return job_route(job::kind::fib, *n.value);
  }
  if (*path == "/busy") {
    auto ms = query_number(parts->query, "ms", limits::max_busy_ms, false);
    if (ms.error) return {std::move(*ms.error), std::nullopt};
    if (!ms.value) {
      std::uniform_int_distribution<std::uint64_t> pick(limits::busy_default_min_ms,
                                                        limits::busy_default_max_ms);
      ms.value = pick(rng);
    }
    return job_route(job::kind::busy, *ms.value);
  }
  if (*path == "/sleep") {
    auto ms = query_number(parts->query, "ms", limits::max_sleep_ms, true);
    if (ms.error) return {std::move(*ms.error), std::nullopt};
    return job_route(job::kind::sleep, *ms.value);
  }
  // /static/<relative>
  const std::string_view relative = std::string_view(*path).substr(std::string_view("/static/").size());
  auto file = open_static(app.opts().root, relative);
  if (!file) return {error_response(404), std::nullopt};
  response r;
  r.content_type = content_type_for(relative);
  r.file = std::move(*file);
  return {std::move(r), std::nullopt};
}

response job_response(job::kind kind, std::uint64_t arg, std::uint64_t value) {
  switch (kind) {
    case job::kind::fib:
      if (value != fib_expected(arg))
        return error_response(
            500, fmt::format("fib({}) computed as {}, expected {}", arg, value, fib_expected(arg)));
      return json(std::pair("n", arg), std::pair("fib", value));
    case job::kind::busy:
      return json(std::pair("busy_ms", arg));
    case job::kind::sleep:
      return json(std::pair("slept_ms", arg));
    case job::kind::respond:
      break;
  }
  return error_response(500, "job_response for a respond job");
}

}  // namespace pools::server::detail
