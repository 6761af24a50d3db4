// SPDX-License-Identifier: MIT
// cache_stampede — a seeded concurrency bug in coroutine code, measured three ways
// (docs/testing-schedules.md, "Measured: real runs against seeds").
//
// The bug: a check-then-act across a suspension point. Four requests for the same key each check
// the cache; on a miss they query the backend (a channel send, which does not wait: its queue
// has room) and fill the cache. The query is meant to happen once; when a second request checks
// the cache between the first one's check and its fill, it happens twice.
//
// The command line is pools/sim/measure.hpp's: no argument prints the table row (1,000 runs on a
// pools::coroutines::thread_pool of 2 threads, seeds 1..1,000 of each strategy); --real N;
// --explore STRATEGY [--seeds N] (POOLS_SIM_SEED=N replays a seed).
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/simulated.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/sim/measure.hpp>

#include <map>
#include <stdexcept>
#include <string>
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
  all.reserve(requests);
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

}  // namespace

int main(int argc, char** argv) {
  return pools::sim::measure_main(argc, argv,
                                  {"coroutines: cache_stampede",
                                   [] {
                                     // One run on the real pool (a pool per run: each run starts cold).
                                     pc::thread_pool pool(2);
                                     return !pc::sync_wait(pool, run_requests(pool)).empty();
                                   },
                                   simulated_program});
}
