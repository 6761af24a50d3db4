// SPDX-License-Identifier: MIT
// this_fiber: sleep without blocking the worker, yield, and the plain-thread fallbacks.
#include <doctest/doctest.h>

#include <pools/fibers/latch.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using pools::fibers::thread_pool;

namespace {
pools::fibers::pool_options one_worker() {
  pools::fibers::pool_options o;
  o.threads = 1;
  return o;
}
}  // namespace

TEST_CASE("this_fiber: is_fiber tells fibers from plain threads") {
  CHECK_FALSE(pools::fibers::this_fiber::is_fiber());
  thread_pool pool(1);
  CHECK(pool.run([] { return pools::fibers::this_fiber::is_fiber(); }));
}

TEST_CASE("this_fiber: sleep_for suspends the fiber, the only worker keeps running others") {
  thread_pool pool(one_worker());
  std::atomic<int> order{0};
  int sleeper_woke_at = 0, busy_done_at = 0;
  pools::fibers::latch sleeping(1);
  pools::fibers::latch done(2);
  const auto start = std::chrono::steady_clock::now();
  pool.post([&] {
    sleeping.count_down();  // makes the other fiber runnable; it runs once we suspend
    pools::fibers::this_fiber::sleep_for(50ms);
    sleeper_woke_at = ++order;
    done.count_down();
  });
  pool.post([&] {
    sleeping.wait();
    busy_done_at = ++order;  // while the sleeper sleeps, on the same (only) worker
    done.count_down();
  });
  done.wait();
  CHECK(busy_done_at == 1);
  CHECK(sleeper_woke_at == 2);
  CHECK(std::chrono::steady_clock::now() - start >= 50ms);
}

TEST_CASE("this_fiber: many sleepers, each wakes after its own deadline") {
  thread_pool pool(2);
  const int n = 200;
  std::atomic<int> early{0}, woke{0};
  pools::fibers::latch done(n);
  for (int i = 0; i < n; ++i) {
    pool.post([&, i] {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(i % 20);
      pools::fibers::this_fiber::sleep_until(deadline);
      if (std::chrono::steady_clock::now() < deadline) early.fetch_add(1);
      woke.fetch_add(1);
      done.count_down();
    });
  }
  done.wait();
  CHECK(early.load() == 0);
  CHECK(woke.load() == n);
  // Deadlines in the past and on other clocks return at once / convert.
  pool.run([] {
    pools::fibers::this_fiber::sleep_until(std::chrono::steady_clock::now() - 1s);
    pools::fibers::this_fiber::sleep_until(std::chrono::system_clock::now() + 1ms);
    pools::fibers::this_fiber::sleep_for(0ms);
  });
}

TEST_CASE("this_fiber: yield lets the other ready fiber run") {
  thread_pool pool(one_worker());
  std::mutex log_mutex;
  std::vector<char> log;
  pools::fibers::latch both_ready(2);
  auto player = [&](char name) {
    both_ready.arrive_and_wait();
    for (int i = 0; i < 3; ++i) {
      {
        std::lock_guard lock(log_mutex);
        log.push_back(name);
      }
      pools::fibers::this_fiber::yield();
    }
  };
  auto a = pool.spawn([&] { player('a'); });
  auto b = pool.spawn([&] { player('b'); });
  a.join();
  b.join();
  REQUIRE(log.size() == 6);
  // With one worker, each yield hands the worker to the other fiber: strict alternation.
  for (std::size_t i = 1; i < log.size(); ++i) CHECK(log[i] != log[i - 1]);
}

TEST_CASE("this_fiber: outside a pool, the calls fall back to std::this_thread") {
  const auto start = std::chrono::steady_clock::now();
  pools::fibers::this_fiber::yield();
  pools::fibers::this_fiber::sleep_for(5ms);
  CHECK(std::chrono::steady_clock::now() - start >= 5ms);
}
