// SPDX-License-Identifier: MIT
// fork_scope (work-first fork/join): results on both pools, the parent's continuation is what a
// thief steals, the join's inline and atomic paths, exceptions delivered at the join, a child
// that suspends and finishes on another worker, misuse, and a stress test counting every task.
#include <doctest/doctest.h>

#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>

#include "test_support.hpp"

namespace pc = pools::coroutines;

namespace {

pc::task<std::uint64_t> wf_fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  pc::task<std::uint64_t> a = wf_fib(n - 1), b = wf_fib(n - 2);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.call(b);
  co_await scope.join();
  co_return co_await std::move(a) + co_await std::move(b);
}

// The sum of [lo, hi) as a binary tree of forks; `nodes` counts every task that ran.
pc::task<std::uint64_t> tree_sum(std::uint64_t lo, std::uint64_t hi, std::atomic<std::uint64_t>& nodes) {
  nodes.fetch_add(1, std::memory_order_relaxed);
  if (hi - lo == 1) co_return lo;
  const std::uint64_t mid = lo + (hi - lo) / 2;
  pc::task<std::uint64_t> left = tree_sum(lo, mid, nodes), right = tree_sum(mid, hi, nodes);
  pc::fork_scope scope;
  co_await scope.fork(left);
  co_await scope.call(right);
  co_await scope.join();
  co_return co_await std::move(left) + co_await std::move(right);
}

pc::task<int> throws_after(std::atomic<int>& finished, const char* what) {
  finished.fetch_add(1);
  throw std::runtime_error(what);
  co_return 0;  // NOLINT: unreachable, makes this a coroutine
}
pc::task<int> counts(std::atomic<int>& finished) {
  finished.fetch_add(1);
  co_return 1;
}

}  // namespace

TEST_CASE("fork_scope: fib by work-first fork/join, on the tuned pool and on the textbook pool") {
  {
    pc::thread_pool pool(2);
    CHECK(pc::sync_wait(pool, wf_fib(0)) == 0);
    CHECK(pc::sync_wait(pool, wf_fib(1)) == 1);
    CHECK(pc::sync_wait(pool, wf_fib(20)) == 6765);
  }
  {
    pc::textbook_pool pool(2);  // the continuation goes through enqueue(): every join is atomic
    CHECK(pc::sync_wait(pool, wf_fib(15)) == 610);
  }
}

TEST_CASE("fork_scope: a tree sum counts every node once") {
  pc::thread_pool pool(3);
  std::atomic<std::uint64_t> nodes{0};
  const std::uint64_t n = 1 << 12;
  CHECK(pc::sync_wait(pool, tree_sum(0, n, nodes)) == n * (n - 1) / 2);
  CHECK(nodes.load() == 2 * n - 1);
}

TEST_CASE("fork_scope: a thief steals the parent's continuation, not the child") {
  // The child waits (bounded) until the parent has gone on past the fork. The parent's
  // continuation sits in the deque under the running child, so it can only run if another worker
  // steals it: a work-first fork without stealing never sets the flag.
  pc::thread_pool pool(2);
  std::atomic<bool> parent_went_on{false};
  std::thread::id child_thread, continuation_thread;
  auto child = [](std::atomic<bool>& went_on, std::thread::id& id) -> pc::task<bool> {
    id = std::this_thread::get_id();
    co_return coro_test::wait_for_flag(went_on);
  };
  auto parent = [&]() -> pc::task<bool> {
    pc::task<bool> c = child(parent_went_on, child_thread);
    pc::fork_scope scope;
    co_await scope.fork(c);
    continuation_thread = std::this_thread::get_id();  // on the thief
    parent_went_on.store(true, std::memory_order_release);
    co_await scope.join();
    co_return co_await std::move(c);
  };
  CHECK(pc::sync_wait(pool, parent()));
  CHECK(child_thread != continuation_thread);
  CHECK(pool.stats().steals >= 1);
}

TEST_CASE("fork_scope: one scope forks several children and is joined again and again") {
  pc::thread_pool pool(2);
  auto parent = [&]() -> pc::task<int> {
    std::atomic<int> finished{0};
    int total = 0;
    for (int round = 0; round < 100; ++round) {
      pc::task<int> a = counts(finished), b = counts(finished), c = counts(finished), d = counts(finished);
      pc::fork_scope scope;
      co_await scope.fork(a);
      co_await scope.fork(b);
      co_await scope.fork(c);
      co_await scope.call(d);
      co_await scope.join();
      total += co_await std::move(a) + co_await std::move(b) + co_await std::move(c) + co_await std::move(d);
    }
    co_return total + 1000 * finished.load();
  };
  CHECK(pc::sync_wait(pool, parent()) == 400 + 400'000);
}

TEST_CASE("fork_scope: a child's exception is delivered at the join, after every child finished") {
  pc::thread_pool pool(2);
  std::atomic<int> finished{0};
  auto forked_throws = [&]() -> pc::task<int> {
    pc::task<int> a = throws_after(finished, "forked"), b = counts(finished), c = counts(finished);
    pc::fork_scope scope;
    co_await scope.fork(a);  // does not throw here
    co_await scope.fork(b);
    co_await scope.call(c);
    try {
      co_await scope.join();
    } catch (const std::runtime_error& e) {
      CHECK(finished.load() == 3);  // no child outlives the join
      CHECK(std::string(e.what()) == "forked");
      co_return 1;
    }
    co_return 0;
  };
  CHECK(pc::sync_wait(pool, forked_throws()) == 1);

  finished = 0;
  auto called_throws = [&]() -> pc::task<int> {
    pc::task<int> a = counts(finished), b = throws_after(finished, "called");
    pc::fork_scope scope;
    co_await scope.fork(a);
    co_await scope.call(b);  // does not throw here either
    co_await scope.join();   // throws
    co_return 0;
  };
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, called_throws()), "called", std::runtime_error);
  CHECK(finished.load() == 2);

  // Many at once, on the textbook pool too: one of them arrives at the join, none is lost.
  pc::textbook_pool textbook(2);
  for (int round = 0; round < 20; ++round) {
    finished = 0;
    auto all_throw = [&]() -> pc::task<void> {
      pc::task<int> a = throws_after(finished, "x"), b = throws_after(finished, "x"),
                    c = throws_after(finished, "x");
      pc::fork_scope scope;
      co_await scope.fork(a);
      co_await scope.fork(b);
      co_await scope.call(c);
      co_await scope.join();
    };
    CHECK_THROWS_AS(pc::sync_wait(round % 2 == 0 ? static_cast<pc::scheduler&>(pool) : textbook, all_throw()),
                    std::runtime_error);
    CHECK(finished.load() == 3);
  }
}

TEST_CASE("fork_scope: a child that sleeps resumes on another worker and still joins") {
  // The parent's continuation is taken by the forking worker's own loop when the child suspends
  // (that counts as taken: the child later arrives atomically). The parent then keeps that worker
  // busy until the child has woken, so the child's timer is taken by the other worker and the
  // child finishes there.
  pc::thread_pool pool(2);
  std::atomic<bool> child_woke{false};
  std::thread::id before, after, parent_thread;
  auto child = [&]() -> pc::task<int> {
    before = coro_test::thread_now();
    co_await pc::sleep_for(pool, std::chrono::milliseconds(20));
    after = coro_test::thread_now();
    child_woke.store(true, std::memory_order_release);
    co_return 7;
  };
  auto parent = [&]() -> pc::task<int> {
    pc::task<int> c = child();
    pc::fork_scope scope;
    co_await scope.fork(c);
    parent_thread = coro_test::thread_now();
    CHECK(coro_test::wait_for_flag(child_woke));  // holds this worker
    co_await scope.join();
    co_return co_await std::move(c);
  };
  CHECK(pc::sync_wait(pool, parent()) == 7);
  CHECK(after != parent_thread);
  (void)before;
}

TEST_CASE("fork_scope: misuse is refused") {
  pc::thread_pool pool(1);
  auto forks_empty = []() -> pc::task<void> {
    pc::task<int> empty;
    pc::fork_scope scope;
    co_await scope.fork(empty);
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, forks_empty()), std::invalid_argument);
  auto forks_finished = []() -> pc::task<void> {
    std::atomic<int> finished{0};
    pc::task<int> t = counts(finished);
    (void)co_await std::move(t);
    pc::fork_scope scope;
    co_await scope.fork(t);
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, forks_finished()), std::invalid_argument);
}

namespace {

// An irregular tree: the fan-out depends on the node, some nodes yield to the pool (so their
// continuations move between workers), every node counted.
pc::task<std::uint64_t> irregular(pc::thread_pool& pool, std::uint64_t seed, int depth,
                                  std::atomic<std::uint64_t>& ran) {
  ran.fetch_add(1, std::memory_order_relaxed);
  if (depth == 0) co_return 1;
  if (seed % 7 == 0) co_await pool.schedule();  // a continuation that leaves its worker
  const int fan = 1 + static_cast<int>(seed % 3);
  pc::task<std::uint64_t> kids[3];
  for (int i = 0; i < fan; ++i)
    kids[i] = irregular(pool, seed * 6364136223846793005ULL + 1442695040888963407ULL + i, depth - 1, ran);
  pc::fork_scope scope;
  for (int i = 0; i + 1 < fan; ++i) co_await scope.fork(kids[i]);
  co_await scope.call(kids[fan - 1]);
  co_await scope.join();
  std::uint64_t sum = 1;
  for (int i = 0; i < fan; ++i) sum += co_await std::move(kids[i]);
  co_return sum;
}

}  // namespace

TEST_CASE("fork_scope: stress — irregular trees on 4 workers, every task counted, bounded in time") {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(coro_test::sanitized() ? 20 : 5);
  const int rounds = coro_test::sanitized() ? 20 : 200;
  pc::thread_pool pool(4);
  int done = 0;
  for (int r = 0; r < rounds && std::chrono::steady_clock::now() < deadline; ++r, ++done) {
    std::atomic<std::uint64_t> ran{0};
    const std::uint64_t counted = pc::sync_wait(pool, irregular(pool, 12345 + r, 11, ran));
    REQUIRE(counted == ran.load());  // every node returned 1 + its children's counts
    std::atomic<std::uint64_t> nodes{0};
    const std::uint64_t n = 2000 + 37 * r;
    REQUIRE(pc::sync_wait(pool, tree_sum(0, n, nodes)) == n * (n - 1) / 2);
    REQUIRE(nodes.load() == 2 * n - 1);
  }
  CHECK(done >= 1);
  MESSAGE("rounds: " << done << ", steals: " << pool.stats().steals);
}
