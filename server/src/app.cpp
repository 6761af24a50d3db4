// SPDX-License-Identifier: MIT
#include <pools/server/app.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

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
  // ordered_json: the keys stay in the order written here (nlohmann::json would sort them).
  using json = nlohmann::ordered_json;
  json pool = json::object();
  if (pool_stats_) {
    for (const auto& s : pool_stats_()) pool[s.name] = s.value;
  }
  const json stats = {
      {"variant", variant_},
      {"strategy", opts_.strategy},
      {"threads", opts_.threads},
      {"connections",
       {{"open", load(c.open)},
        {"accepted", load(c.accepted)},
        {"refused", load(c.refused)},
        {"timeouts", load(c.timeouts)},
        {"max", opts_.max_connections}}},
      {"requests",
       {{"total", requests},
        {"responses", responses},
        {"in_flight", requests >= responses ? requests - responses : 0},
        {"status_4xx", load(c.status_4xx)},
        {"status_5xx", load(c.status_5xx)}}},
      {"jobs", {{"started", started}, {"done", done}, {"in_flight", started >= done ? started - done : 0}}},
      {"pool", std::move(pool)},
  };
  // The names come from the command line and the drivers: bytes that are not UTF-8 become U+FFFD
  // rather than an exception in the middle of a response.
  return stats.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace pools::server
