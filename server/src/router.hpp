// SPDX-License-Identifier: MIT
// server/src/router.hpp — which handler answers a request, and the handlers.
#pragma once

#include <pools/server/job.hpp>

#include <optional>
#include <random>

#include "request.hpp"
#include "response.hpp"

namespace pools::server {
class app;
}

namespace pools::server::detail {

/// A response now, or (when `work` is set) a job whose completion makes the response.
struct routed {
  response resp;
  std::optional<job> work;
};

/// Routes `req` (its body may be moved into the response). `rng` draws /busy's default duration.
routed route(const app& app, request& req, std::minstd_rand& rng);

/// The response of a completed job; for fib, `value` is checked against fib(n) (500 if wrong).
response job_response(job::kind kind, std::uint64_t arg, std::uint64_t value);

/// GET /: the static HTML page (about 4 KiB).
std::string_view index_page() noexcept;

}  // namespace pools::server::detail
