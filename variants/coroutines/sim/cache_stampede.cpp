// SPDX-License-Identifier: MIT
// cache_stampede — a seeded concurrency bug in coroutine code, measured three ways
// (docs/testing-schedules.md, "Measured: real runs against seeds").
//
// The bug: a check-then-act across a suspension point. Four requests for the same key each check
// the cache; on a miss they query the backend (a channel send, which does not wait: its queue
// has room) and fill the cache. The query is meant to happen once; when a second request checks
// the cache between the first one's check and its fill, it happens twice.
//
//   cache_stampede                     the table row: 1,000 real runs, then 1,000 seeds of each strategy
//   cache_stampede --real N            N runs on a pools::coroutines::thread_pool of 2 threads
//   cache_stampede --explore S [--seeds N]
//                                      strategy S ("random", "pct:2:60"): stop at the first failing
//                                      seed, print its schedule, replay line and trace
//   POOLS_SIM_SEED=N POOLS_SIM_STRATEGY=S cache_stampede --explore S     replays seed N
//
// Exit status: 0 when the measurement ran (a found bug is the expected result), 1 when --explore
// found nothing, 2 for a bad argument.
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/simulated.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/sim/explore.hpp>

#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace pc = pools::coroutines;

constexpr int requests = 4;

struct service {
  std::map<int, int> cache;      // key -> value; touched only between suspension points
  pc::channel<int> backend{16};  // the queries sent to the backend: room for every request
  int queries = 0;
};

// The bug is here: the check (find) and the fill are separated by the query's co_await.
template <class Pool>
pc::task<int> get(Pool& /*pool*/, service& s, int key) {
  if (auto hit = s.cache.find(key); hit != s.cache.end()) co_return hit->second;
  ++s.queries;
  co_await s.backend.send(key);  // ask the backend: a suspension point (it does not wait here)
  s.cache[key] = key * 10;
  co_return key * 10;
}

// "" when the key was queried once; otherwise what went wrong.
template <class Pool>
pc::task<std::string> run_requests(Pool& pool) {
  service s;
  std::vector<pc::task<int>> all;
  for (int r = 0; r < requests; ++r) all.push_back(get(pool, s, 7));
  const std::vector<int> values = co_await pc::when_all(std::move(all));
  for (int v : values)
    if (v != 70) co_return "a request got " + std::to_string(v);
  if (s.queries != 1) co_return "the backend was queried " + std::to_string(s.queries) + " times for one key";
  co_return "";
}

void simulated_program(pools::sim::scheduler& engine) {
  pc::simulated pool(engine);
  if (std::string problem = pool.run(run_requests(pool)); !problem.empty()) throw std::runtime_error(problem);
}

int real_failures(int runs) {
  pc::thread_pool pool(2);
  int failed = 0;
  for (int i = 0; i < runs; ++i)
    if (!pc::sync_wait(pool, run_requests(pool)).empty()) ++failed;
  return failed;
}

// How many of seeds 1..n fail, and the first that does (0: none).
std::pair<int, std::uint64_t> failing_seeds(const std::string& strategy, int n) {
  int failed = 0;
  std::uint64_t first = 0;
  for (int seed = 1; seed <= n; ++seed) {
    try {
      (void)pools::sim::run_once(static_cast<std::uint64_t>(seed), strategy, simulated_program);
    } catch (const std::exception&) {
      ++failed;
      if (first == 0) first = static_cast<std::uint64_t>(seed);
    }
  }
  return {failed, first};
}

int parse_count(std::string_view s) {
  int n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || end != s.data() + s.size() || n <= 0)
    throw std::invalid_argument("'" + std::string(s) + "' is not a positive count");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string_view> args(argv + 1, argv + argc);
    if (args.empty()) {
      const int real = real_failures(1000);
      const auto [random_failed, random_first] = failing_seeds("random", 1000);
      const auto [pct_failed, pct_first] = failing_seeds("pct:2:60", 1000);
      std::printf(
          "| program | real pool: runs of 1,000 that fail | random walk: first failing seed, failing seeds "
          "of 1,000 "
          "| pct:2:60: first failing seed, failing seeds of 1,000 |\n|---|---:|---:|---:|\n");
      std::printf("| coroutines: cache_stampede | %d | %llu, %d | %llu, %d |\n", real,
                  static_cast<unsigned long long>(random_first), random_failed,
                  static_cast<unsigned long long>(pct_first), pct_failed);
      return 0;
    }
    if (args[0] == "--real" && args.size() == 2) {
      const int runs = parse_count(args[1]);
      std::printf("real pool: %d of %d runs failed\n", real_failures(runs), runs);
      return 0;
    }
    if (args[0] == "--explore" && (args.size() == 2 || (args.size() == 4 && args[2] == "--seeds"))) {
      pools::sim::explore_options o;
      o.strategy = std::string(args[1]);
      o.runs = args.size() == 4 ? static_cast<std::uint64_t>(parse_count(args[3])) : 1000;
      o.program = std::string(argv[0]) + " --explore " + o.strategy;
      o.out = stdout;
      o.schedule_lines = 0;
      const auto r = pools::sim::explore(o, simulated_program);
      if (!r.failed) std::printf("no failure in %llu seeds\n", static_cast<unsigned long long>(r.runs));
      return r.failed ? 0 : 1;
    }
    std::fprintf(stderr, "usage: %s [--real N | --explore STRATEGY [--seeds N]]\n", argv[0]);
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "cache_stampede: %s\n", e.what());
    return 2;
  }
}
