// SPDX-License-Identifier: MIT
// pools/bench/asio_workloads.hpp — workloads in Asio's own terms, shared by every Asio-based
// subject (the asio::thread_pool reference and the reactor variant).
//
// memory: in callback style a "suspended task" is a pending completion handler. n timers wait
// at once (far in the future), the RSS growth is measured, then all are cancelled and every
// handler must run exactly once (with operation_aborted).
#pragma once

#include <pools/bench/harness.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/steady_timer.hpp>
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace pools::bench {

/// `make(threads)` returns an owner object (kept alive by the repetition); `get_executor(owner, i)`
/// returns the Asio executor the i-th timer is created on.
template <class Make, class GetExecutor>
prepare_fn asio_timer_memory_workload(Make make, GetExecutor get_executor) {
  return [make, get_executor](const params& p) -> repetition {
    std::shared_ptr owner{make(p.threads)};
    return [owner, get_executor, n = p.n](rep_timer& timer, metrics& out) {
      std::vector<std::unique_ptr<boost::asio::steady_timer>> timers;
      timers.reserve(static_cast<std::size_t>(n));
      pools::wait_group all_ran(n);
      std::atomic<std::int64_t> aborted{0};
      const auto before = current_rss_bytes();
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) {
        auto& t = *timers.emplace_back(std::make_unique<boost::asio::steady_timer>(
            get_executor(*owner, static_cast<std::size_t>(i)), std::chrono::hours(1)));
        t.async_wait([&](const boost::system::error_code& ec) {
          if (ec == boost::asio::error::operation_aborted) aborted.fetch_add(1, std::memory_order_relaxed);
          all_ran.done();
        });
      }
      timer.stop();
      const auto after = current_rss_bytes();
      for (auto& t : timers) t->cancel();
      if (!all_ran.wait_for(std::chrono::seconds(120)))
        fail_verification("memory: cancelled handlers never ran");
      if (aborted.load() != n)
        fail_verification(fmt::format("memory: {} of {} handlers saw the cancel", aborted.load(), n));
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
    };
  };
}

}  // namespace pools::bench
