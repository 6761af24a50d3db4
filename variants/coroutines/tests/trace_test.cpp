// SPDX-License-Identifier: MIT
// The trace (pools/trace.hpp) against the pool's own counters: fork/join fib on two workers, then
// the export's counts must equal what the pool counted itself. Built with -DPOOLS_TRACE=ON only
// (without it the pool records nothing and there is nothing to compare).
#include <doctest/doctest.h>

#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/testing/trace_summary.hpp>
#include <pools/trace.hpp>
#include <pools/trace_export.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

#include "test_support.hpp"

#if POOLS_TRACE

namespace pc = pools::coroutines;

namespace {

pc::task<long> traced_fib(int n) {
  if (n < 2) co_return n;
  auto [a, b] = co_await pc::when_all(traced_fib(n - 1), traced_fib(n - 2));
  co_return a + b;
}

}  // namespace

namespace {

// One traced pool's life: ten runs of fib(20) on two workers, the pool's counters read once they
// stop moving, then the export.
struct traced_run {
  pc::thread_pool::statistics stats;
  pools::trace::summary trace;
};

traced_run run_traced() {
  traced_run r;
  pools::trace::mark();  // leave out the events of what ran before
  {
    pc::thread_pool pool(2);
    // Several runs: a steal needs the second worker awake while the first one forks. Small
    // enough that no ring overflows (about 10,946 forks a run).
    for (int run = 0; run < 10; ++run) CHECK(pc::sync_wait(pool, traced_fib(20)) == 6765);
    // sync_wait returns while the workers may still search, park and wake one another (counted,
    // and traced). Read the counters once they stop moving: both workers parked, nothing left to
    // wake them — until the destructor wakes each of them once (counted and traced too).
    const auto same = [](const pc::thread_pool::statistics& a, const pc::thread_pool::statistics& b) {
      return a.steals == b.steals && a.parks == b.parks && a.wakes == b.wakes;
    };
    r.stats = pool.stats();
    for (int i = 0; i < 500; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const auto now = pool.stats();
      if (same(now, r.stats)) break;
      r.stats = now;
    }
  }  // joined: the rings are complete
  r.trace = pools::testing::export_trace_summary("coroutines");
  return r;
}

}  // namespace

TEST_CASE("trace: coroutines thread_pool's events agree with its own counters") {
  // On a loaded machine (ctest -j2 beside another test) the second worker may get no core while
  // the first one forks: a run without any steal happens. So up to five pools, until one steals;
  // every run's counts must agree all the same.
  traced_run r;
  for (int attempt = 0; attempt < 5; ++attempt) {
    r = run_traced();
    const auto& s = r.trace;
    REQUIRE(s.truncated_tracks == 0);
    CHECK(s.total.steals == r.stats.steals);
    CHECK(s.total.parks == r.stats.parks);
    CHECK(s.total.wakes == r.stats.wakes + 2);  // + the destructor's wake of each parked worker
    // Every item queued (a fork, the sync_wait's injection) was taken and run exactly once.
    CHECK(s.total.tasks == s.total.posts);
    CHECK(s.total.tasks > 10 * 6765);
    if (s.total.steals > 0) break;
  }
  CHECK(r.trace.total.steals > 0);
}

namespace {

// One forced steal: the first child waits (bounded) for a flag that only the stolen item sets.
// Help-first (when_all) leaves the second child in the deque; work-first (fork_scope) the
// parent's continuation. Returns the trace's summary of it.
pools::trace::summary one_forced_steal(bool work_first) {
  pools::trace::mark();
  {
    pc::thread_pool pool(2);
    std::atomic<bool> flag{false};
    auto waits = [](std::atomic<bool>& f) -> pc::task<bool> { co_return coro_test::wait_for_flag(f); };
    auto sets = [](std::atomic<bool>& f) -> pc::task<bool> {
      f.store(true, std::memory_order_release);
      co_return true;
    };
    auto help_first = [&]() -> pc::task<bool> {
      auto [a, b] = co_await pc::when_all(waits(flag), sets(flag));
      co_return a&& b;
    };
    auto work_first_parent = [&]() -> pc::task<bool> {
      pc::task<bool> a = waits(flag), b = sets(flag);
      pc::fork_scope scope;
      co_await scope.fork(a);  // the continuation (which calls b) is what the other worker steals
      co_await scope.call(b);
      co_await scope.join();
      co_return co_await std::move(a) && co_await std::move(b);
    };
    CHECK(pc::sync_wait(pool, work_first ? work_first_parent() : help_first()));
  }
  return pools::testing::export_trace_summary(work_first ? "coroutines_workfirst" : "coroutines_helpfirst");
}

}  // namespace

TEST_CASE("trace: steals are counted by kind, children (when_all) or continuations (fork_scope)") {
  const auto help = one_forced_steal(false);
  CHECK(help.stolen_tasks >= 1);
  CHECK(help.stolen_continuations == 0);
  const auto work = one_forced_steal(true);
  CHECK(work.stolen_continuations >= 1);
  CHECK(work.stolen_tasks == 0);
}

#endif
