// SPDX-License-Identifier: MIT
// The trace (pools/trace.hpp) of both fibers pools: fork/join fib on two workers, then the export's
// counts must balance. Built with -DPOOLS_TRACE=ON only (without it the pools record nothing and
// there is nothing to compare). Neither pool counts its steals, parks or wakes (pool_statistics
// has fibers and stacks only), so the checks are the trace's own invariants.
#include <doctest/doctest.h>

#include <pools/fibers/mutex.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/trace_summary.hpp>
#include <pools/trace.hpp>
#include <pools/trace_export.hpp>

#include <chrono>
#include <mutex>
#include <vector>

#include "test_support.hpp"

#if POOLS_TRACE

TEST_CASE("trace: fibers thread_pool's events balance") {
  // A steal needs the second worker awake while the first one forks: ten runs of fib(18) (4,180
  // spawns each) almost always have some, and fill no ring. On a machine whose cores are busy
  // elsewhere the idle worker may get no core during all ten: a few attempts, each its own trace.
  pools::trace::summary s;
  for (int attempt = 0; attempt < 5 && s.total.steals == 0; ++attempt) {
    pools::trace::mark();  // leave out the events of the test cases (and attempts) before this one
    {
      pools::fibers::thread_pool pool(2);
      for (int run = 0; run < 10; ++run) {
        CHECK(pool.run([&pool] { return fibers_test::fib(pool, 18); }) == 2584);
      }
    }  // joined: the rings are complete
    s = pools::testing::export_trace_summary("fibers");
    REQUIRE(s.truncated_tracks == 0);
    // Every item queued (a spawn, a woken or yielding fiber) started exactly one task slice: taken
    // by a worker, or run inline by its joiner (whose stale queue entry is then dropped unrun).
    CHECK(s.total.tasks == s.total.posts);
    CHECK(s.total.posts >= 10 * 4180);  // at least one per spawn
  }
  CHECK(s.total.steals > 0);
}

TEST_CASE("trace: fibers thread_pool's events balance when fibers suspend") {
  // The other ways into a queue: fibers woken by a mutex and by the timer queue, and yielding ones.
  pools::trace::mark();
  long counter = 0;
  {
    pools::fibers::thread_pool pool(2);
    pools::fibers::mutex m;
    pool.run([&] {
      std::vector<pools::fibers::join_handle<void>> fibers;
      for (int f = 0; f < 50; ++f) {
        fibers.push_back(pool.spawn([&, f] {
          for (int i = 0; i < 10; ++i) {
            pools::fibers::this_fiber::yield();
            {
              std::lock_guard lock(m);
              ++counter;
              pools::fibers::this_fiber::yield();  // holding m: others block on it
            }
            if (i % 5 == f % 5) pools::fibers::this_fiber::sleep_for(std::chrono::microseconds(20));
          }
        }));
      }
      for (auto& h : fibers) h.join();
    });
  }
  CHECK(counter == 500);
  const auto s = pools::testing::export_trace_summary("fibers");
  REQUIRE(s.truncated_tracks == 0);
  CHECK(s.total.tasks == s.total.posts);
  CHECK(s.total.posts > 500);  // the spawns, and fibers re-queued by their yields at least
}

TEST_CASE("trace: fibers textbook_pool's events balance") {
  pools::trace::mark();
  {
    pools::fibers::textbook_pool pool(2);
    // Fewer runs than above: each fiber here is posted twice (spawned, then woken from its join)
    // and records more events, and a ring holds 262,144.
    for (int run = 0; run < 3; ++run) {
      CHECK(pool.spawn([&pool] { return fibers_test::fib(pool, 18); }).join() == 2584);
    }
  }
  const auto s = pools::testing::export_trace_summary("fibers");
  REQUIRE(s.truncated_tracks == 0);
  CHECK(s.total.tasks == s.total.posts);
  CHECK(s.total.posts >= 3 * 4180);
  CHECK(s.total.steals == 0);  // one shared queue: nothing to steal
}

#endif
