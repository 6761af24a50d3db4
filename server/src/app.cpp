#include <pools/server/app.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace pools::server {

namespace {
/// JSON string contents: names come from drivers, but a quote must still not break the document.
std::string escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out.append(fmt::format("\\u{:04x}", static_cast<unsigned>(c)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}
}  // namespace

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
  std::string out = fmt::format(
      R"({{"variant":"{}","strategy":"{}","threads":{},)"
      R"("connections":{{"open":{},"accepted":{},"refused":{},"timeouts":{},"max":{}}},)"
      R"("requests":{{"total":{},"responses":{},"in_flight":{},"status_4xx":{},"status_5xx":{}}},)"
      R"("jobs":{{"started":{},"done":{},"in_flight":{}}},"pool":{{)",
      escaped(variant_), escaped(opts_.strategy), opts_.threads, load(c.open), load(c.accepted),
      load(c.refused), load(c.timeouts), opts_.max_connections, requests, responses,
      requests >= responses ? requests - responses : 0, load(c.status_4xx), load(c.status_5xx), started, done,
      started >= done ? started - done : 0);
  if (pool_stats_) {
    bool first = true;
    for (const auto& s : pool_stats_()) {
      out.append(first ? "" : ",").append(fmt::format(R"("{}":{})", escaped(s.name), s.value));
      first = false;
    }
  }
  out.append("}}");
  return out;
}

}  // namespace pools::server
