// SPDX-License-Identifier: MIT
// Stopping the futures pool's work: tasks that take a std::stop_token (as std::jthread's
// function may) and request_stop(), which stops running tasks' tokens and removes queued tasks:
// counted, reported through the futures, nothing leaked.
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::futures::thread_pool;
using namespace futures_test;
using namespace std::chrono_literals;

static_assert(pools::futures::accepts_stop_token<void (*)(std::stop_token, int), int>);
static_assert(!pools::futures::accepts_stop_token<void (*)(int), int>);

namespace {
// Runs until its token says stop (bounded by `patience`); true when it saw the stop.
bool run_until_stopped(std::stop_token token, std::latch& started) {
  started.count_down();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!token.stop_requested()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}
}  // namespace

TEST_CASE("stop: a task taking a std::stop_token gets the pool's, after which come its arguments") {
  thread_pool pool(1);
  auto f =
      pool.submit_task([](std::stop_token t, int a, int b) { return t.stop_possible() ? a * b : -1; }, 6, 7);
  CHECK(f.get() == 42);
  std::atomic<int> seen{0};
  pool.detach_task([&](std::stop_token t) { seen.store(t.stop_requested() ? 2 : 1); });
  pool.wait();
  CHECK(seen.load() == 1);
}

TEST_CASE("stop: request_stop() stops a running task's token and runs its stop_callbacks") {
  thread_pool pool(1);
  std::latch started(1);
  std::atomic<bool> callback_ran{false};
  auto f = pool.submit_task([&](std::stop_token t) {
    const std::stop_callback on_stop(t, [&] { callback_ran.store(true); });
    return run_until_stopped(t, started);
  });
  started.wait();
  CHECK(pool.request_stop() == 0);  // nothing was queued
  REQUIRE(f.wait_for(patience) == std::future_status::ready);
  CHECK(f.get());
  CHECK(callback_ran.load());
}

TEST_CASE("stop: request_stop() removes the queued tasks unrun: counted, futures broken, captures freed") {
  thread_pool pool(1);
  std::latch started(1);
  auto holder = pool.submit_task([&](std::stop_token t) { return run_until_stopped(t, started); });
  started.wait();
  auto resource = std::make_shared<int>(0);
  std::atomic<int> runs{0};
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 10; ++i) pool.detach_task([&runs, resource] { runs.fetch_add(1); });
  for (int i = 0; i < 5; ++i)
    futures.push_back(pool.submit_task([&runs, resource] { return runs.fetch_add(1); }));
  CHECK(resource.use_count() == 16);
  CHECK(pool.request_stop() == 15);
  CHECK(pool.get_tasks_stopped() == 15);
  // The detached tasks' captures are gone at once. A submitted task's callable lives in its
  // future's shared state (std::packaged_task keeps it there) until the future is destroyed.
  CHECK(resource.use_count() == 1 + 5);
  for (auto& f : futures) CHECK_THROWS_AS(f.get(), std::future_error);
  futures.clear();
  CHECK(resource.use_count() == 1);
  CHECK(holder.get());  // the running task saw the stop
  REQUIRE(pool.wait_for(patience));
  CHECK(runs.load() == 0);
}

TEST_CASE("stop: after request_stop() the pool goes on, with a fresh token") {
  thread_pool pool(2);
  const std::stop_token before = pool.get_stop_token();
  CHECK(pool.request_stop() == 0);
  CHECK(before.stop_requested());
  CHECK_FALSE(pool.get_stop_token().stop_requested());
  auto f = pool.submit_task([](std::stop_token t) { return t.stop_requested(); });
  CHECK_FALSE(f.get());
  std::atomic<int> runs{0};
  pool.detach_loop(0, 100, [&](int) { runs.fetch_add(1); });
  pool.wait();
  CHECK(runs.load() == 100);
  CHECK(pool.get_tasks_stopped() == 0);
}

TEST_CASE("stop: request_stop() racing with producers: every task either ran or was counted as stopped") {
  thread_pool pool(2);
  const std::size_t per_producer = scaled(20000);
  constexpr int producers = 2;
  std::atomic<std::size_t> runs{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        if ((i + static_cast<std::size_t>(p)) % 2 == 0) {
          pool.detach_task([&] { runs.fetch_add(1, std::memory_order_relaxed); });
        } else {
          pool.detach_task([&](std::stop_token) { runs.fetch_add(1, std::memory_order_relaxed); });
        }
      }
    });
  }
  std::size_t removed = 0;
  std::thread stopper([&] {
    while (!done.load()) {
      removed += pool.request_stop();
      std::this_thread::sleep_for(100us);
    }
  });
  for (auto& t : threads) t.join();
  done.store(true);
  stopper.join();
  REQUIRE(pool.wait_for(patience));
  CHECK(pool.get_tasks_stopped() == removed);
  CHECK(runs.load() + removed == producers * per_producer);
}
