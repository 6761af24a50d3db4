// SPDX-License-Identifier: MIT
// The futures pool's monitoring and control: task counts, pause/unpause, purge, and what
// destruction does with a paused pool.
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <future>
#include <latch>
#include <memory>
#include <semaphore>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::futures::thread_pool;
using namespace futures_test;

namespace {
struct counts {
  std::size_t total, running, queued;
  bool operator==(const counts&) const = default;
};
doctest::String toString(const counts& c) {
  return doctest::toString(c.total) + "/" + doctest::toString(c.running) + "/" + doctest::toString(c.queued);
}
counts read(const thread_pool& pool) {
  return {pool.get_tasks_total(), pool.get_tasks_running(), pool.get_tasks_queued()};
}
void acquire_n(std::counting_semaphore<>& s, int n) {
  for (int i = 0; i < n; ++i) REQUIRE(s.try_acquire_for(patience));
}
}  // namespace

TEST_CASE("monitoring: 4 threads, 12 tasks held by a gate: total/running/queued step by step") {
  thread_pool pool(4);
  std::counting_semaphore<> started(0), gate(0);
  std::atomic<int> finished{0};
  for (int i = 0; i < 12; ++i) {
    pool.detach_task([&] {
      started.release();
      gate.acquire();
      finished.fetch_add(1);
    });
  }
  // Once n tasks have started, exactly n - 4 have finished (4 workers, each running one held
  // task), and each worker counted its previous task as finished before taking the next.
  acquire_n(started, 4);
  CHECK(read(pool) == counts{12, 4, 8});
  gate.release(4);
  acquire_n(started, 4);
  CHECK(read(pool) == counts{8, 4, 4});
  gate.release(4);
  acquire_n(started, 4);
  CHECK(read(pool) == counts{4, 4, 0});
  gate.release(4);
  CHECK(pool.wait_for(patience));
  CHECK(read(pool) == counts{0, 0, 0});
  CHECK(finished.load() == 12);
}

TEST_CASE("monitoring: running counts every worker after reset() grows, shrinks and regrows the pool") {
  // Each worker reports "running" in a flag of its own; reset() must hand the new workers flags
  // that the counts see (a bigger set when growing, the same one when shrinking).
  thread_pool pool(2);
  for (const std::size_t threads : {std::size_t{2}, std::size_t{7}, std::size_t{3}, std::size_t{16}}) {
    CAPTURE(threads);
    pool.reset(threads);
    std::counting_semaphore<> started(0), gate(0);
    const std::size_t tasks = threads + 2;
    for (std::size_t i = 0; i < tasks; ++i) {
      pool.detach_task([&] {
        started.release();
        gate.acquire();
      });
    }
    acquire_n(started, static_cast<int>(threads));
    CHECK(read(pool) == counts{tasks, threads, 2});
    gate.release(static_cast<std::ptrdiff_t>(tasks));
    CHECK(pool.wait_for(patience));
    CHECK(read(pool) == counts{0, 0, 0});
  }
}

TEST_CASE("monitoring: the counts stay consistent while producers, workers and a monitor race") {
  constexpr std::size_t threads = 3;
  thread_pool pool(threads);
  // Each worker's start-up (its init) counts as a running task until the worker has run it: the
  // race below counts only the posted tasks, so it starts once the workers are up.
  pool.wait();
  const std::size_t per_producer = scaled(100'000);
  std::atomic<std::size_t> posted{0}, finished{0};
  std::atomic<bool> producing{true};
  std::atomic<std::size_t> violations{0}, samples{0};
  // The producers start once the monitor runs: on 2 cores (and slower under the sanitizers) a
  // monitor thread scheduled late could otherwise miss the whole race and take no sample.
  std::latch monitoring(1);
  std::jthread monitor([&] {
    monitoring.count_down();
    do {
      const std::size_t finished_before = finished.load();
      const std::size_t running = pool.get_tasks_running();
      const std::size_t queued = pool.get_tasks_queued();
      const std::size_t total = pool.get_tasks_total();
      const std::size_t posted_after = posted.load();
      // At most `threads` tasks run; the pool never holds more than was posted and not yet
      // finished (a task counts as finished a moment after its body, hence + threads).
      if (running > threads) violations.fetch_add(1);
      if (queued > posted_after || total > posted_after) violations.fetch_add(1);
      if (total + finished_before > posted_after + threads) violations.fetch_add(1);
      samples.fetch_add(1);
    } while (producing.load());
  });
  {
    std::vector<std::jthread> producers;
    for (int p = 0; p < 2; ++p) {
      producers.emplace_back([&] {
        monitoring.wait();
        for (std::size_t i = 0; i < per_producer; ++i) {
          posted.fetch_add(1);
          pool.detach_task([&] { finished.fetch_add(1); });
        }
      });
    }
  }
  CHECK(pool.wait_for(patience));
  producing = false;
  monitor.join();
  CHECK(violations.load() == 0);
  CHECK(samples.load() > 0);
  CHECK(finished.load() == 2 * per_producer);
  CHECK(read(pool) == counts{0, 0, 0});
}

TEST_CASE("pause: running tasks finish, queued tasks wait; wait() waits only for running tasks") {
  thread_pool pool(2);
  std::counting_semaphore<> started(0), gate(0);
  std::atomic<int> blockers_done{0}, queued_ran{0};
  for (int i = 0; i < 2; ++i) {
    pool.detach_task([&] {
      started.release();
      gate.acquire();
      blockers_done.fetch_add(1);
    });
  }
  acquire_n(started, 2);
  CHECK_FALSE(pool.is_paused());
  pool.pause();
  CHECK(pool.is_paused());
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 5; ++i) {
    futures.push_back(pool.submit_task([&, i] {
      queued_ran.fetch_add(1);
      return i;
    }));
  }
  CHECK(read(pool) == counts{7, 2, 5});
  CHECK_FALSE(pool.wait_for(10ms));  // paused, but two tasks still run
  gate.release(2);
  // Workers are free and tasks are queued, but none may start: wait() returns once the two
  // running tasks are done, with the queue untouched.
  CHECK(pool.wait_for(patience));
  CHECK(blockers_done.load() == 2);
  CHECK(queued_ran.load() == 0);
  CHECK(read(pool) == counts{5, 0, 5});
  for (auto& f : futures) CHECK(f.wait_for(0ms) == std::future_status::timeout);
  pool.unpause();
  CHECK_FALSE(pool.is_paused());
  CHECK(pool.wait_for(patience));
  CHECK(queued_ran.load() == 5);
  for (int i = 0; i < 5; ++i) CHECK(futures[static_cast<std::size_t>(i)].get() == i);
}

TEST_CASE("pause: a waiter blocked on a busy pool is released by pause() once nothing runs") {
  thread_pool pool(1);
  std::binary_semaphore gate(0);
  std::counting_semaphore<> started(0);
  pool.detach_task([&] {
    started.release();
    gate.acquire();
  });
  acquire_n(started, 1);
  for (int i = 0; i < 3; ++i) pool.detach_task([] {});
  auto waiting = std::async(std::launch::async, [&] { return pool.wait_for(patience); });
  pool.pause();
  gate.release();
  CHECK(waiting.get());  // returned with 3 tasks still queued: paused semantics
  CHECK(pool.get_tasks_queued() == 3);
  pool.unpause();
  CHECK(pool.wait_for(patience));
}

TEST_CASE("pause: tasks posted while paused, then unpause, from many threads") {
  thread_pool pool(3);
  const std::size_t n = scaled(20'000);
  std::atomic<std::size_t> ran{0};
  for (int round = 0; round < 20; ++round) {
    pool.pause();
    {
      std::vector<std::jthread> producers;
      for (int p = 0; p < 2; ++p) {
        producers.emplace_back([&] {
          for (std::size_t i = 0; i < n / 40; ++i) pool.detach_task([&] { ran.fetch_add(1); });
        });
      }
    }
    pool.unpause();
  }
  CHECK(pool.wait_for(patience));
  CHECK(ran.load() == 20 * 2 * (n / 40));
}

TEST_CASE("purge: drops queued tasks (futures report broken_promise), running tasks finish") {
  thread_pool pool(1);
  std::binary_semaphore gate(0);
  std::counting_semaphore<> started(0);
  auto running = pool.submit_task([&] {
    started.release();
    gate.acquire();
    return 1;
  });
  acquire_n(started, 1);
  auto token = std::make_shared<int>(0);
  std::atomic<int> ran{0};
  std::vector<std::future<int>> dropped;
  for (int i = 0; i < 3; ++i) dropped.push_back(pool.submit_task([&] { return ran.fetch_add(1); }));
  for (int i = 0; i < 4; ++i) pool.detach_task([&ran, token] { ran.fetch_add(1); });
  pool.detach_loop(0, 100, [&ran, token](int) { ran.fetch_add(1); }, 5);
  CHECK(token.use_count() == 1 + 4 + 1);  // four tasks and one shared loop body hold it
  CHECK(pool.get_tasks_queued() == 3 + 4 + 5);
  CHECK(pool.purge() == 12);
  CHECK(token.use_count() == 1);  // the dropped tasks' captures are gone
  CHECK(pool.get_tasks_queued() == 0);
  for (auto& f : dropped) {
    try {
      f.get();
      FAIL("a purged task's future must not hold a value");
    } catch (const std::future_error& e) {
      CHECK(e.code() == std::future_errc::broken_promise);
    }
  }
  gate.release();
  CHECK(running.get() == 1);
  CHECK(pool.wait_for(patience));
  CHECK(ran.load() == 0);
}

TEST_CASE("destruction: drains a running pool, but drops the queue of a paused one") {
  SUBCASE("not paused: every queued task runs, including the ones they post") {
    std::atomic<int> ran{0};
    {
      thread_pool pool(2);
      pool.pause();
      for (int i = 0; i < 100; ++i) {
        pool.detach_task([&] {
          ran.fetch_add(1);
          pool.detach_task([&] { ran.fetch_add(1); });
        });
      }
      pool.unpause();
    }
    CHECK(ran.load() == 200);
  }
  SUBCASE("paused: running tasks finish, queued tasks are destroyed unrun") {
    std::counting_semaphore<> started(0), gate(0);
    std::atomic<int> blockers_done{0}, ran{0};
    auto token = std::make_shared<int>(0);
    std::vector<std::future<int>> futures;
    {
      auto pool = std::make_unique<thread_pool>(2);
      for (int i = 0; i < 2; ++i) {
        pool->detach_task([&] {
          started.release();
          gate.acquire();
          blockers_done.fetch_add(1);
        });
      }
      acquire_n(started, 2);
      pool->pause();
      for (int i = 0; i < 3; ++i) futures.push_back(pool->submit_task([&] { return ran.fetch_add(1); }));
      for (int i = 0; i < 3; ++i) pool->detach_task([&ran, token] { ran.fetch_add(1); });
      std::jthread releaser([&] { gate.release(2); });
      pool.reset();  // waits for the two blockers, drops the six queued tasks
    }
    CHECK(blockers_done.load() == 2);
    CHECK(ran.load() == 0);
    CHECK(token.use_count() == 1);
    for (auto& f : futures) CHECK_THROWS_AS(f.get(), std::future_error);
  }
}
