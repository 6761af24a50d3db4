// SPDX-License-Identifier: MIT
// pools/server/app.hpp — what every connection of one server shares: options, counters, the
// driver's pool statistics, the static file root. Built once by pools::server::run() (main.hpp).
#pragma once

#include <pools/server/counters.hpp>
#include <pools/server/options.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pools::server {

/// One number the driver reports under "pool" in GET /stats.
struct pool_stat {
  std::string name;
  std::uint64_t value = 0;
};

class app {
 public:
  /// `variant` names the driver ("reactor"); `every_request_is_a_job` makes every request a job
  /// (job::kind::respond for the cheap ones) for the worker model. Throws std::invalid_argument
  /// if opts.root is set but is not a directory.
  app(options opts, std::string variant, bool every_request_is_a_job = false);

  const options& opts() const noexcept { return opts_; }
  std::string_view variant() const noexcept { return variant_; }
  bool every_request_is_a_job() const noexcept { return every_request_is_a_job_; }
  server::counters& counters() noexcept { return counters_; }
  const server::counters& counters() const noexcept { return counters_; }

  /// The driver's pool counters for GET /stats. `fn` is called on whatever thread answers the
  /// request, concurrently with the pool: it must be thread-safe. Set it before serving.
  void set_pool_stats(std::function<std::vector<pool_stat>()> fn) { pool_stats_ = std::move(fn); }

  /// The body of GET /stats.
  std::string stats_json() const;

 private:
  options opts_;
  std::string variant_;
  bool every_request_is_a_job_;
  server::counters counters_;
  std::function<std::vector<pool_stat>()> pool_stats_;
};

}  // namespace pools::server
