// SPDX-License-Identifier: MIT
// The textbook pool's behaviour beyond the Executor contract (the contract itself is checked by
// conformance_futures): submit and its futures, wait(), the drain, exceptions, and the one thing
// no futures pool can do — a task waiting for another task of the same pool — shown, bounded.
#include <doctest/doctest.h>

#include <pools/futures/textbook_pool.hpp>
#include <pools/testing/zero_threads.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "test_support.hpp"

using pools::futures::textbook_pool;
using namespace futures_test;

TEST_CASE("textbook_pool: concurrency() is the thread count; zero threads is one per hardware thread") {
  textbook_pool pool(3);
  CHECK(pool.concurrency() == 3);
  pools::testing::check_zero_threads_means_every_core([] { return textbook_pool(0); });
}

TEST_CASE("textbook_pool: submit hands back values, move-only values and exceptions") {
  textbook_pool pool(2);
  CHECK(pool.submit([](int a, int b) { return a * b; }, 6, 7).get() == 42);
  auto moved = pool.submit([](std::unique_ptr<int> p) { return std::make_unique<int>(*p + 1); },
                           std::make_unique<int>(41));
  CHECK(*moved.get() == 42);
  auto failing = pool.submit([]() -> int { throw std::runtime_error("expected: from a task"); });
  CHECK_THROWS_WITH_AS(failing.get(), "expected: from a task", std::runtime_error);
}

TEST_CASE("textbook_pool: an exception in a posted task is reported, and the pool goes on") {
  const reported_exceptions reported;
  textbook_pool pool(2);
  pool.post([] { throw std::runtime_error("expected: posted"); });
  pool.wait();
  CHECK(reported.value() == 1);
  CHECK(pool.submit([] { return 1; }).get() == 1);
}

TEST_CASE("textbook_pool: wait() returns once the queue is empty and no task is running") {
  textbook_pool pool(2);
  std::atomic<int> done{0};
  const int n = static_cast<int>(scaled(10'000));
  for (int i = 0; i < n; ++i) {
    pool.post([&pool, &done, i] {
      if (i % 10 == 0) pool.post([&done] { done.fetch_add(1); });  // posted by a task: waited for too
      done.fetch_add(1);
    });
  }
  pool.post([&done] {
    std::this_thread::sleep_for(20ms);  // still running when wait() is called
    done.fetch_add(1);
  });
  pool.wait();
  CHECK(done.load() == n + n / 10 + 1);
}

TEST_CASE("textbook_pool: the destructor drains queued tasks and the tasks they post") {
  const int n = static_cast<int>(scaled(20'000));
  std::atomic<int> ran{0}, follow_ups{0};
  std::latch release(1);
  // The releaser frees the workers 20 ms from now, while the destructor below is already waiting
  // with the queue full. (The assertions do not depend on that timing.)
  std::jthread releaser([&release] {
    std::this_thread::sleep_for(20ms);
    release.count_down();
  });
  {
    textbook_pool pool(2);
    for (int w = 0; w < 2; ++w) pool.post([&release] { release.wait(); });  // hold both workers
    for (int i = 0; i < n; ++i) {
      pool.post([&pool, &ran, &follow_ups, i] {
        ran.fetch_add(1);
        if (i % 100 == 0) pool.post([&follow_ups] { follow_ups.fetch_add(1); });
      });
    }
  }  // ~textbook_pool: drains
  CHECK(ran.load() == n);
  CHECK(follow_ups.load() == (n + 99) / 100);
}

TEST_CASE("textbook_pool: a task that waits for a task of its own pool holds its worker") {
  // One worker. The parent submits a child and waits for its future: the child is queued behind
  // the parent, and the only thread that could run it is the one waiting. Real code writes
  //
  //     pool.submit([&pool] { return pool.submit([] { return 1; }).get(); }).get();  // never returns
  //
  // and hangs forever (with N workers: as soon as N parents wait at once), so that is not run
  // here. Instead the parent gives up after 200 ms and reports that the child had not started.
  textbook_pool pool(1);
  std::future<std::future_status> parent = pool.submit([&pool] {
    std::future<int> child = pool.submit([] { return 1; });
    return child.wait_for(200ms);
  });
  CHECK(parent.get() == std::future_status::timeout);  // the child never started meanwhile
  pool.wait();                                         // once the parent returned, it ran
}
