// SPDX-License-Identifier: MIT
// thread_pool: construction, schedule(), spawn (counted, exceptions reported), post, sync_wait,
// draining destruction, and a million nested spawns counted exactly.
#include <doctest/doctest.h>

#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/testing/zero_threads.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;

TEST_CASE("thread_pool: a thread count of 0 starts one worker per hardware thread") {
  pools::testing::check_zero_threads_means_every_core([] { return pc::thread_pool(0); });
}

TEST_CASE("thread_pool: concurrency() is the worker count") {
  pc::thread_pool pool(3);
  CHECK(pool.concurrency() == 3);
  CHECK_FALSE(pool.on_worker_thread());
}

TEST_CASE("thread_pool: schedule() moves the coroutine onto a worker, and back to the caller via sync_wait") {
  pc::thread_pool pool(2);
  const auto main_id = std::this_thread::get_id();
  auto body = [](pc::thread_pool& p, std::thread::id caller) -> pc::task<bool> {
    co_await p.schedule();
    const bool on_worker = p.on_worker_thread() && std::this_thread::get_id() != caller;
    co_await p.schedule();  // on a worker: a yield, still on a worker afterwards
    co_return on_worker&& p.on_worker_thread();
  };
  CHECK(pc::sync_wait(pool, body(pool, main_id)));
}

TEST_CASE("thread_pool: sync_wait rethrows, and refuses to run on a worker of the same pool") {
  pc::thread_pool pool(2);
  auto thrower = []() -> pc::task<int> {
    throw std::out_of_range("bad index 3");
    co_return 0;
  };
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, thrower()), "bad index 3", std::out_of_range);

  auto nested = [](pc::thread_pool& p) -> pc::task<std::string> {
    auto inner = []() -> pc::task<int> { co_return 1; };
    try {
      (void)pc::sync_wait(p, inner());
    } catch (const std::logic_error& e) {
      co_return e.what();
    }
    co_return "no error";
  };
  CHECK(pc::sync_wait(pool, nested(pool)).find("same pool") != std::string::npos);
  CHECK_THROWS_AS(pc::sync_wait(pool, pc::task<int>{}), std::invalid_argument);
}

TEST_CASE("thread_pool: post runs callables (the pools::Executor side)") {
  pc::thread_pool pool(2);
  std::atomic<int> ran{0};
  pools::wait_group wg(1000);
  for (int i = 0; i < 1000; ++i) {
    pool.post([&] {
      ran.fetch_add(1, std::memory_order_relaxed);
      wg.done();
    });
  }
  wg.wait();
  CHECK(ran.load() == 1000);
}

namespace {
std::atomic<int> spawn_failures{0};
std::atomic<int> other_failures{0};  // reported, but not thrown by the test's tasks
void count_spawn_failure(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const std::runtime_error& ex) {
    (std::string(ex.what()) == "spawned task failed" ? spawn_failures : other_failures).fetch_add(1);
  } catch (...) {
    other_failures.fetch_add(1);  // the pool reported a failure of its own
  }
}
}  // namespace

TEST_CASE("thread_pool: spawn detaches a task; its exception is reported; the destructor waits for it") {
  spawn_failures = 0;
  other_failures = 0;
  auto previous = pools::set_unhandled_exception_handler(&count_spawn_failure);
  std::atomic<int> finished{0};
  {
    pc::thread_pool pool(2);
    auto ok = [](std::atomic<int>& f) -> pc::task<int> {
      f.fetch_add(1);
      co_return 5;  // discarded
    };
    auto bad = [](std::atomic<int>& f) -> pc::task<void> {
      f.fetch_add(1);
      throw std::runtime_error("spawned task failed");
      co_return;
    };
    for (int i = 0; i < 50; ++i) {
      pool.spawn(ok(finished));
      pool.spawn(bad(finished));
    }
    CHECK_THROWS_AS(pool.spawn(pc::task<void>{}), std::invalid_argument);
  }  // drains: every spawned task ran and every exception was reported
  CHECK(finished.load() == 100);
  CHECK(spawn_failures.load() == 50);
  CHECK(other_failures.load() == 0);
  pools::set_unhandled_exception_handler(previous);
}

TEST_CASE("thread_pool: the destructor drains spawned tasks that are suspended (sleeping) at the time") {
  std::atomic<int> woke{0};
  coro_test::lifetime_probe::reset();
  {
    pc::thread_pool pool(2);
    auto sleeper = [](pc::thread_pool& p, std::atomic<int>& w, coro_test::lifetime_probe) -> pc::task<void> {
      co_await pc::sleep_for(p, 20ms);
      w.fetch_add(1);
    };
    for (int i = 0; i < 10; ++i) pool.spawn(sleeper(pool, woke, coro_test::lifetime_probe{}));
  }
  CHECK(woke.load() == 10);
  CHECK(coro_test::lifetime_probe::alive.load() == 0);  // every spawned frame was freed
}

namespace {
// Node i spawns nodes 2i+1 and 2i+2 while they are below n: a binary tree of spawns, each spawned
// from inside a spawned task.
pc::task<void> spawn_tree(pc::thread_pool& pool, std::vector<std::atomic<std::uint8_t>>& runs,
                          std::atomic<std::uint64_t>& total, std::uint64_t i) {
  runs[i].fetch_add(1, std::memory_order_relaxed);
  total.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t n = runs.size();
  if (2 * i + 1 < n) pool.spawn(spawn_tree(pool, runs, total, 2 * i + 1));
  if (2 * i + 2 < n) pool.spawn(spawn_tree(pool, runs, total, 2 * i + 2));
  co_return;
}

// Each spawns the next: a chain a million long, which must not grow any stack.
pc::task<void> spawn_chain(pc::thread_pool& pool, std::atomic<std::uint64_t>& count, std::uint64_t left) {
  count.fetch_add(1, std::memory_order_relaxed);
  if (left > 1) pool.spawn(spawn_chain(pool, count, left - 1));
  co_return;
}
}  // namespace

TEST_CASE("thread_pool: 1,000,000 nested spawns are counted exactly (tree and chain)") {
  const std::uint64_t n = 1'000'000;
  SUBCASE("tree: every node runs exactly once") {
    std::vector<std::atomic<std::uint8_t>> runs(n);
    std::atomic<std::uint64_t> total{0};
    {
      pc::thread_pool pool(4);
      pool.spawn(spawn_tree(pool, runs, total, 0));
    }  // the destructor returns only when every spawn, at any depth, has finished
    CHECK(total.load() == n);
    std::uint64_t wrong = 0;
    for (auto& r : runs) wrong += r.load(std::memory_order_relaxed) != 1 ? 1 : 0;
    CHECK(wrong == 0);
  }
  SUBCASE("chain: each task spawns the next") {
    std::atomic<std::uint64_t> count{0};
    {
      pc::thread_pool pool(2);
      pool.spawn(spawn_chain(pool, count, n));
    }
    CHECK(count.load() == n);
  }
}

TEST_CASE("thread_pool: tasks posted from outside and from tasks all run, from many threads at once") {
  const int posters = 4, per_poster = coro_test::sanitized() ? 20'000 : 100'000;
  std::atomic<int> ran{0};
  {
    pc::thread_pool pool(2);
    std::vector<std::jthread> threads;
    for (int p = 0; p < posters; ++p) {
      threads.emplace_back([&] {
        for (int i = 0; i < per_poster; ++i) {
          pool.post([&, i] {
            ran.fetch_add(1, std::memory_order_relaxed);
            if (i % 1000 == 0) pool.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
          });
        }
      });
    }
  }  // jthreads joined first (declared later), then the pool drains
  CHECK(ran.load() == posters * per_poster + posters * (per_poster / 1000));
}

TEST_CASE("thread_pool: an idle pool parks its workers and still wakes for each submission") {
  pc::thread_pool pool(2);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(2ms);  // long enough for both workers to spin out and park
    CHECK(pc::sync_wait(pool, [](int r) -> pc::task<int> { co_return r; }(round)) == round);
  }
  CHECK(pool.stats().parks > 0);
}
