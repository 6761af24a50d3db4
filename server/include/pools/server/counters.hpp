// SPDX-License-Identifier: MIT
// pools/server/counters.hpp — server-wide statistics, shown by GET /stats.
#pragma once

#include <atomic>
#include <cstdint>

namespace pools::server {

/// Updated by connections on whatever thread runs them. Relaxed atomics: these are statistics,
/// never used to order other memory (a /stats reader may see counts from slightly different
/// instants). `open` also enforces --max-connections, where an increment that overshoots is undone.
struct counters {
  std::atomic<std::uint64_t> accepted{0};   ///< connections taken within the cap
  std::atomic<std::uint64_t> refused{0};    ///< connections answered 503 (over the cap)
  std::atomic<std::uint64_t> open{0};       ///< accepted and not yet destroyed
  std::atomic<std::uint64_t> timeouts{0};   ///< connections closed by a timeout
  std::atomic<std::uint64_t> requests{0};   ///< requests parsed (or rejected as unparseable)
  std::atomic<std::uint64_t> responses{0};  ///< responses serialised
  std::atomic<std::uint64_t> status_4xx{0};
  std::atomic<std::uint64_t> status_5xx{0};
  std::atomic<std::uint64_t> jobs_started{0};    ///< jobs handed to the driver (take_job)
  std::atomic<std::uint64_t> jobs_done{0};       ///< jobs completed or failed
  std::atomic<std::uint64_t> jobs_refused{0};    ///< of those, refused by a full queue: 503
  std::atomic<std::uint64_t> jobs_cancelled{0};  ///< of those, jobs whose client had gone (job::stop)
};

}  // namespace pools::server
