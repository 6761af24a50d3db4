// SPDX-License-Identifier: MIT
// pools/server/work.hpp — the serial pieces of the jobs, shared so that every driver does the same
// work and only the parallel structure differs.
#pragma once

#include <pools/server/job.hpp>

#include <chrono>
#include <cstdint>
#include <stop_token>

namespace pools::server {

/// Spins on the calling thread until `d` has passed: /busy's CPU-bound wait. It never sleeps or
/// yields, so it holds its worker exactly as a CPU-bound handler would.
void busy_wait(std::chrono::nanoseconds d) noexcept;
/// busy_wait that also reads `stop` as it spins and returns early once it is requested (the
/// job's client has gone): true if `d` passed, false if stopped.
bool busy_wait(std::chrono::nanoseconds d, const std::stop_token& stop) noexcept;

/// Blocks the calling thread for `d`, or until `stop` is requested (a condition_variable_any
/// wait on the token, so the stop wakes it at once): true if `d` passed, false if stopped.
/// /sleep for a model whose workers block (run_blocking).
bool blocking_sleep(std::chrono::nanoseconds d, const std::stop_token& stop);

/// fib(n) by the naive recursion, serially: the base case a driver's fork-join may cut off to.
std::uint64_t fib_serial(std::uint64_t n) noexcept;

/// Below this n a fork costs more than it saves: every driver's fork-join runs fib_serial there,
/// so the drivers compare their forks, not their grain sizes.
inline constexpr std::uint64_t fib_cutoff = 16;

/// Runs `j` start to end on the calling thread, blocking it as long as the job takes: fib by
/// fib_serial, busy by busy_wait, sleep by blocking_sleep (busy and sleep end early when j.stop
/// is requested), respond at once. Returns fib's value (0 for the others). The synchronous half of the
/// half-sync/half-async drivers (pool_session.hpp).
std::uint64_t run_blocking(const job& j);

/// fib(n) by iteration (n <= 93): what the core checks a driver's answer against.
std::uint64_t fib_expected(std::uint64_t n) noexcept;

}  // namespace pools::server
