// SPDX-License-Identifier: MIT
// The catalogue: every workload's name, meaning, default size and argument check. Kept apart
// from the runner so bench/README.md and `--list` can be read against one short table.
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>

#include <fmt/core.h>

#include <cstdint>

namespace pools::bench {

const std::vector<workload_info>& workload_catalogue() {
  static const std::vector<workload_info> catalogue{
      {"fib", "recursive fibonacci, one task per call, no cutoff", "n: fibonacci index (0..45)", 30},
      {"skynet", "tree of tasks with fan-out 10, leaf i returns i, sums checked",
       "n: leaves, a power of 10 (10..100000000)", 1'000'000},
      {"nqueens", "one task per legal queen placement, solutions counted", "n: board size (1..16)", 12},
      {"matmul", "divide-and-conquer C += A*B, 8 products per level in two rounds",
       "n: matrix size, a power of 2 (64..4096)", 1024},
      {"submit", "an external thread posts n empty tasks, then waits: ns per task", "n: tasks (1..100000000)",
       1'000'000},
      {"submit_future", "n submissions each returning a future, all awaited: ns per task",
       "n: tasks (1..100000000)", 1'000'000},
      {"vector_fill", "BS::thread_pool paper: fill n random vectors; speedup at T/2, T, 2T, 4T tasks",
       "n: vectors of 4096 doubles (1..1000000)", 4000},
      {"wakeup", "latency from post on an external thread to the task starting on an idle pool",
       "n: samples (1..1000000)", 10'000},
      {"memory", "n tasks suspended at once: max RSS and bytes per task", "n: suspended tasks (1..10000000)",
       100'000},
  };
  return catalogue;
}

namespace {
bool power_of(std::int64_t n, std::int64_t base) {
  if (n < 1) return false;
  while (n % base == 0) n /= base;
  return n == 1;
}
}  // namespace

// Returns an empty string when n is acceptable for the workload, else what is wrong.
std::string check_n(std::string_view workload, std::int64_t n) {
  auto range = [&](std::int64_t lo, std::int64_t hi) -> std::string {
    if (n < lo || n > hi)
      return fmt::format("--n {} is out of range for {}: allowed {}..{}", n, workload, lo, hi);
    return {};
  };
  if (workload == "fib") return range(0, 45);
  if (workload == "skynet") {
    if (!power_of(n, 10) || n < 10)
      return fmt::format("--n {} for skynet must be a power of 10 (10, 100, ...)", n);
    return range(10, 100'000'000);
  }
  if (workload == "nqueens") return range(1, nqueens_max_n);
  if (workload == "matmul") {
    if (!power_of(n, 2)) return fmt::format("--n {} for matmul must be a power of 2", n);
    return range(64, 4096);
  }
  if (workload == "submit" || workload == "submit_future") return range(1, 100'000'000);
  if (workload == "vector_fill") return range(1, 1'000'000);
  if (workload == "wakeup") return range(1, 1'000'000);
  if (workload == "memory") return range(1, 10'000'000);
  return {};
}

}  // namespace pools::bench
