// SPDX-License-Identifier: MIT
#include <pools/server/app.hpp>

#include <fmt/format.h>

#include <stdexcept>

#include "json_body.hpp"

namespace pools::server {

app::app(options opts, std::string variant, bool every_request_is_a_job)
    : opts_(std::move(opts)), variant_(std::move(variant)), every_request_is_a_job_(every_request_is_a_job) {
  if (!opts_.root.empty()) {
    std::error_code ec;
    auto canonical = std::filesystem::canonical(opts_.root, ec);
    if (ec || !std::filesystem::is_directory(canonical, ec))
      throw std::invalid_argument(fmt::format("--root '{}' is not a directory", opts_.root.string()));
    opts_.root = std::move(canonical);
  }
}

std::string app::stats_json() const {
  const auto load = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  const auto& c = counters_;
  // Each counter is read once: in_flight is derived from the values printed beside it.
  const auto requests = load(c.requests), responses = load(c.responses);
  const auto started = load(c.jobs_started), done = load(c.jobs_done);
  // Built key by key in a json_body (src/json_body.hpp: out of memory, it throws and never ends
  // the process); the keys stay in the order written here. Each reference below is done with
  // before the next key of `stats` is added: an ordered_json object is a std::vector, which a new
  // key may move.
  using json = detail::json_body::json;
  detail::json_body body;
  body.reserve(7);  // variant, strategy, threads, connections, requests, jobs, pool (json_body.hpp)
  auto& stats = body.value;
  stats["variant"] = variant_;
  stats["strategy"] = opts_.strategy;
  stats["threads"] = opts_.threads;
  auto& connections = stats["connections"] = json::object();  // made whole (json_body.hpp)
  connections["open"] = load(c.open);
  connections["accepted"] = load(c.accepted);
  connections["refused"] = load(c.refused);
  connections["timeouts"] = load(c.timeouts);
  connections["max"] = opts_.max_connections;
  auto& request_counts = stats["requests"] = json::object();  // made whole (json_body.hpp)
  request_counts["total"] = requests;
  request_counts["responses"] = responses;
  request_counts["in_flight"] = requests >= responses ? requests - responses : 0;
  request_counts["status_4xx"] = load(c.status_4xx);
  request_counts["status_5xx"] = load(c.status_5xx);
  auto& jobs = stats["jobs"] = json::object();  // made whole (json_body.hpp)
  jobs["started"] = started;
  jobs["done"] = done;
  jobs["in_flight"] = started >= done ? started - done : 0;
  jobs["refused"] = load(c.jobs_refused);
  jobs["cancelled"] = load(c.jobs_cancelled);
  auto& pool = stats["pool"] = json::object();
  if (pool_stats_) {
    for (const auto& s : pool_stats_()) pool[s.name] = s.value;
  }
  // The names come from the command line and the drivers: json_body::dump() turns bytes that are
  // not UTF-8 into U+FFFD rather than an exception in the middle of a response.
  return body.dump();
}

}  // namespace pools::server
