// SPDX-License-Identifier: MIT
// Why fork-join in the futures style deadlocks a fixed pool — demonstrated, and bounded so the
// test always ends. README.md ("Why nested waits deadlock") walks through the first case.
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <future>
#include <latch>
#include <thread>

#include "test_support.hpp"

using pools::futures::thread_pool;
using namespace futures_test;

namespace {

// A parent in the futures style: submit the child, block until its future is ready. Real code
// would call child.get(); this one also gives up when told to, so the demonstration can end.
// Both parents first meet at `started`: each then holds a worker before any child is queued
// (otherwise a child submitted before the second parent could run first and spoil the setup).
int parent_task(thread_pool& pool, std::latch& started, std::latch& waiting,
                const std::atomic<bool>& give_up) {
  started.arrive_and_wait();
  auto child = pool.submit_task([] { return 1; });
  waiting.count_down();
  while (child.wait_for(1ms) != std::future_status::ready) {
    if (give_up.load()) return -1;  // the demonstration is over: free the worker
  }
  return child.get() + 1;
}

// Sets the flag when the test leaves its scope, even through a failed REQUIRE, so that the
// pool's destructor (which drains) never waits for a parent that waits forever.
struct give_up_on_exit {
  std::atomic<bool>& flag;
  ~give_up_on_exit() { flag = true; }
};

}  // namespace

TEST_CASE("nested wait: with every worker waiting on a queued child, a fixed pool cannot progress") {
  std::atomic<bool> give_up{false};
  thread_pool pool(2);
  const give_up_on_exit guard{give_up};
  std::latch both_started(2), both_waiting(2);
  auto a = pool.submit_task([&] { return parent_task(pool, both_started, both_waiting, give_up); });
  auto b = pool.submit_task([&] { return parent_task(pool, both_started, both_waiting, give_up); });
  both_waiting.wait();

  // Both workers are inside the parents, blocked on their children; the children sit in the
  // queue, and the only threads that could run them are the two that wait for them.
  CHECK(pool.get_tasks_running() == 2);
  CHECK(pool.get_tasks_queued() == 2);
  // Nothing moves, however long we give it (any amount of time shows the same).
  CHECK_FALSE(pool.wait_for(200ms));
  CHECK(pool.get_tasks_queued() == 2);
  CHECK(a.wait_for(0ms) == std::future_status::timeout);
  CHECK(b.wait_for(0ms) == std::future_status::timeout);

  // Release: the parents stop waiting (a real child.get() never would), the workers are free,
  // and only now do the children run. The first parent to notice gives up, as its child is
  // still queued; the second may find its child already run by the freed worker.
  give_up = true;
  const int ra = a.get(), rb = b.get();
  CHECK((ra == -1 || rb == -1));
  CHECK((ra == -1 || ra == 2));
  CHECK((rb == -1 || rb == 2));
  CHECK(pool.wait_for(patience));
  CHECK(pool.get_tasks_total() == 0);
}

TEST_CASE("nested wait: the same two parents finish when one worker stays free") {
  std::atomic<bool> give_up{false};
  thread_pool pool(3);  // one more worker than waiting parents
  const give_up_on_exit guard{give_up};
  std::latch both_started(2), both_waiting(2);
  auto a = pool.submit_task([&] { return parent_task(pool, both_started, both_waiting, give_up); });
  auto b = pool.submit_task([&] { return parent_task(pool, both_started, both_waiting, give_up); });
  REQUIRE(a.wait_for(patience) == std::future_status::ready);
  REQUIRE(b.wait_for(patience) == std::future_status::ready);
  CHECK(a.get() == 2);
  CHECK(b.get() == 2);
  // That is no fix for recursion: a tree of depth d needs d + 1 free workers on its deepest
  // path, so fork-join belongs in a pool that suspends tasks instead of blocking threads.
}

TEST_CASE("no hidden batching: a task waiting on a *later* task completes while a worker is free") {
  // A pool that hands a worker several queued tasks at once could give one worker both A and
  // B, and A would wait forever for B stuck behind it. Here a free worker always takes the next
  // queued task, so A's wait ends.
  thread_pool pool(2);
  const std::size_t rounds = scaled(2'000);
  for (std::size_t r = 0; r < rounds; ++r) {
    std::latch b_ran(1);
    auto a = pool.submit_task([&] {  // waits for B, but not forever: a failing test must end
      const auto deadline = std::chrono::steady_clock::now() + patience;
      while (!b_ran.try_wait()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::yield();
      }
      return true;
    });
    pool.detach_task([&] { b_ran.count_down(); });
    REQUIRE(a.wait_for(patience) == std::future_status::ready);
    CHECK(a.get());
    REQUIRE(pool.wait_for(patience));
  }
}
