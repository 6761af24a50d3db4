// SPDX-License-Identifier: MIT
// Bounded submission (back-pressure): set_capacity, try_post / try_detach_task / try_submit_task
// that say no when the queue is full, and the blocking calls that wait for room.
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <memory>
#include <semaphore>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::futures::thread_pool;
using namespace futures_test;
using namespace std::chrono_literals;

namespace {
// Occupies the pool's only worker until release(), so what is queued after it stays queued. The
// state is shared with the task, so a test that fails early leaves nothing dangling.
struct held_worker {
  struct state {
    std::latch started{1};
    std::binary_semaphore gate{0};
  };
  explicit held_worker(thread_pool& pool) {
    pool.detach_task([s = shared] {
      s->started.count_down();
      (void)s->gate.try_acquire_for(patience);
    });
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!shared->started.try_wait() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    REQUIRE(shared->started.try_wait());
  }
  ~held_worker() { release(); }
  held_worker(const held_worker&) = delete;
  held_worker& operator=(const held_worker&) = delete;
  void release() {
    if (!released) shared->gate.release();
    released = true;
  }
  std::shared_ptr<state> shared = std::make_shared<state>();
  bool released = false;
};
}  // namespace

TEST_CASE("bounded: an unbounded pool (the default) always accepts") {
  thread_pool pool(1);
  CHECK(pool.get_capacity() == 0);
  std::atomic<int> runs{0};
  for (int i = 0; i < 100; ++i) CHECK(pool.try_post([&] { runs.fetch_add(1); }));
  pool.wait();
  CHECK(runs.load() == 100);
}

TEST_CASE("bounded: try_post, try_detach_task and try_submit_task say no when the queue is full") {
  thread_pool pool(1);
  pool.set_capacity(2);
  std::atomic<int> runs{0};
  held_worker held(pool);
  CHECK(pool.try_post([&] { runs.fetch_add(1); }));
  CHECK(pool.try_detach_task([&](int n) { runs.fetch_add(n); }, 10));
  CHECK(pool.get_tasks_queued() == 2);
  CHECK_FALSE(pool.try_post([&] { runs.fetch_add(100); }));
  CHECK_FALSE(pool.try_detach_task([&](int n) { runs.fetch_add(n); }, 1000));
  CHECK_FALSE(pool.try_submit_task([] { return 1; }).has_value());
  CHECK(pool.get_tasks_queued() == 2);
  held.release();
  REQUIRE(pool.wait_for(patience));
  CHECK(runs.load() == 11);  // the refused tasks never ran
  auto f = pool.try_submit_task([](int a) { return a * 2; }, 21);
  REQUIRE(f.has_value());
  CHECK(f->get() == 42);
}

TEST_CASE("bounded: a blocking post waits for room and returns once a worker takes a task") {
  thread_pool pool(1);
  pool.set_capacity(1);
  std::atomic<int> runs{0};
  held_worker held(pool);
  pool.detach_task([&] { runs.fetch_add(1); });  // fills the queue
  std::atomic<bool> returned{false};
  std::thread producer([&] {
    pool.detach_task([&] { runs.fetch_add(1); });  // must wait: the queue is full
    returned.store(true);
  });
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(returned.load());
  CHECK(pool.get_tasks_queued() == 1);
  held.release();
  producer.join();
  CHECK(returned.load());
  REQUIRE(pool.wait_for(patience));
  CHECK(runs.load() == 2);
}

TEST_CASE("bounded: set_capacity(0) and purge() release the producers waiting for room") {
  thread_pool pool(1);
  pool.set_capacity(1);
  held_worker held(pool);
  pool.detach_task([] {});
  std::atomic<int> returned{0};
  std::thread a([&] {
    pool.detach_task([] {});
    returned.fetch_add(1);
  });
  std::this_thread::sleep_for(50ms);
  CHECK(returned.load() == 0);
  CHECK(pool.purge() == 1);  // room: the waiting producer queues its task
  a.join();
  CHECK(returned.load() == 1);
  std::thread b([&] {
    pool.detach_task([] {});
    returned.fetch_add(1);
  });
  std::this_thread::sleep_for(50ms);
  CHECK(returned.load() == 1);
  pool.set_capacity(0);
  b.join();
  CHECK(returned.load() == 2);
  held.release();
  CHECK(pool.wait_for(patience));
}

TEST_CASE("bounded: a task of the pool posting more never waits for room (no deadlock)") {
  thread_pool pool(2);
  pool.set_capacity(1);
  std::atomic<int> runs{0};
  pool.detach_task([&] {
    for (int i = 0; i < 20; ++i) pool.detach_task([&] { runs.fetch_add(1); });
    runs.fetch_add(1);
  });
  REQUIRE(pool.wait_for(patience));
  CHECK(runs.load() == 21);
}

TEST_CASE("bounded: many blocking producers, a small queue: every task runs, the queue never overflows") {
  thread_pool pool(2);
  constexpr std::size_t capacity = 4;
  pool.set_capacity(capacity);
  const std::size_t per_producer = scaled(5000);
  constexpr int producers = 3;
  std::atomic<std::size_t> runs{0};
  std::atomic<std::size_t> worst{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&] {
      for (std::size_t i = 0; i < per_producer; ++i) {
        pool.detach_task([&] { runs.fetch_add(1, std::memory_order_relaxed); });
        // Read right after a push: the queue holds at most `capacity` tasks at any time.
        const std::size_t queued = pool.get_tasks_queued();
        std::size_t seen = worst.load();
        while (queued > seen && !worst.compare_exchange_weak(seen, queued)) {
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(pool.wait_for(patience));
  CHECK(runs.load() == producers * per_producer);
  CHECK(worst.load() <= capacity);
  CHECK(worst.load() >= 1);
}
