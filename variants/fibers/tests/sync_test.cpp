// SPDX-License-Identifier: MIT
// mutex, condition_variable, latch, wait_group: correctness, and that waiting suspends the fiber
// rather than the worker thread.
#include <doctest/doctest.h>

#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/fibers/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using pools::fibers::thread_pool;

namespace {
pools::fibers::pool_options one_worker() {
  pools::fibers::pool_options o;
  o.threads = 1;
  return o;
}
}  // namespace

TEST_CASE("latch: waiters on a single worker are suspended, not blocking it") {
  // One worker, 200 fibers waiting on a latch that only a later fiber opens. If wait() blocked
  // the thread, the opener could never run.
  thread_pool pool(one_worker());
  pools::fibers::latch gate(1);
  pools::fibers::latch arrived(200);
  pools::fibers::latch finished(200);
  std::atomic<int> passed{0};
  for (int i = 0; i < 200; ++i) {
    pool.post([&] {
      arrived.count_down();
      gate.wait();
      passed.fetch_add(1);
      finished.count_down();
    });
  }
  pool.post([&] {
    arrived.wait();  // the opener too waits without holding the worker
    gate.count_down();
  });
  finished.wait();  // main thread: blocks the thread, which is fine here
  CHECK(passed.load() == 200);
  CHECK(gate.try_wait());
  CHECK(pool.stats().fibers_created >= 200);  // each waiter needed its own stack
}

TEST_CASE("latch: counts, arrive_and_wait, and bad arguments") {
  CHECK_THROWS_AS(pools::fibers::latch(-1), std::invalid_argument);
  pools::fibers::latch l(3);
  CHECK_FALSE(l.try_wait());
  l.count_down(2);
  CHECK_THROWS_AS(l.count_down(2), std::invalid_argument);
  CHECK_FALSE(l.try_wait());
  thread_pool pool(2);
  pools::fibers::latch meet(3);
  std::atomic<int> after{0};
  for (int i = 0; i < 3; ++i) {
    pool.post([&] {
      meet.arrive_and_wait();
      after.fetch_add(1);
    });
  }
  l.count_down();
  CHECK(l.try_wait());
  CHECK(fibers_test::eventually([&] { return after.load() == 3; }));
}

TEST_CASE("wait_group: grows while work runs, rejects extra done()") {
  thread_pool pool(2);
  pools::fibers::wait_group wg;
  std::atomic<int> ran{0};
  pool.run([&] {
    for (int i = 0; i < 50; ++i) {
      wg.add();
      pool.post([&] {
        wg.add();  // work that starts more work: the count grows before it shrinks
        pool.post([&] {
          ran.fetch_add(1);
          wg.done();
        });
        ran.fetch_add(1);
        wg.done();
      });
    }
    wg.wait();
  });
  CHECK(ran.load() == 100);
  CHECK(wg.count() == 0);
  CHECK_THROWS_AS(wg.done(), std::logic_error);
  CHECK_THROWS_AS(wg.add(-1), std::invalid_argument);
}

TEST_CASE("mutex: mutual exclusion with suspension inside the critical section") {
  thread_pool pool(4);
  pools::fibers::mutex m;
  long counter = 0;  // plain int: TSan would flag any missing exclusion
  int inside = 0;
  bool overlap = false;
  const int fibers = 16;
  const int per_fiber = static_cast<int>(fibers_test::scaled(500));
  pools::fibers::latch done(fibers);
  for (int f = 0; f < fibers; ++f) {
    pool.post([&] {
      for (int i = 0; i < per_fiber; ++i) {
        std::lock_guard lock(m);
        if (++inside != 1) overlap = true;
        ++counter;
        if (i % 16 == 0) pools::fibers::this_fiber::yield();  // holders suspend: waiters must park
        --inside;
      }
      done.count_down();
    });
  }
  // A plain thread competes too: the same mutex blocks it instead.
  for (int i = 0; i < 100; ++i) {
    std::lock_guard lock(m);
    ++counter;
  }
  done.wait();
  std::lock_guard lock(m);
  CHECK_FALSE(overlap);
  CHECK(counter == fibers * per_fiber + 100);
}

TEST_CASE("mutex: try_lock") {
  pools::fibers::mutex m;
  CHECK(m.try_lock());
  CHECK_FALSE(m.try_lock());
  thread_pool pool(1);
  CHECK_FALSE(pool.run([&] { return m.try_lock(); }));
  m.unlock();
  CHECK(pool.run([&] {
    const bool got = m.try_lock();
    if (got) m.unlock();
    return got;
  }));
}

TEST_CASE("condition_variable: producer and consumers hand over every item") {
  thread_pool pool(3);
  pools::fibers::mutex m;
  pools::fibers::condition_variable cv;
  std::deque<int> queue;
  bool closed = false;
  const int items = static_cast<int>(fibers_test::scaled(20000));
  std::atomic<long> sum{0};
  std::atomic<int> taken{0};
  pools::fibers::latch consumers_done(4);
  for (int c = 0; c < 4; ++c) {
    pool.post([&] {
      for (;;) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return !queue.empty() || closed; });
        if (queue.empty()) break;
        sum.fetch_add(queue.front());
        queue.pop_front();
        taken.fetch_add(1);
      }
      consumers_done.count_down();
    });
  }
  pool.post([&] {
    for (int i = 1; i <= items; ++i) {
      {
        std::lock_guard lock(m);
        queue.push_back(i);
      }
      cv.notify_one();
    }
    {
      std::lock_guard lock(m);
      closed = true;
    }
    cv.notify_all();
  });
  consumers_done.wait();
  CHECK(taken.load() == items);
  CHECK(sum.load() == static_cast<long>(items) * (items + 1) / 2);
}

TEST_CASE("condition_variable: timed waits time out, in a fiber and on a plain thread") {
  pools::fibers::mutex m;
  pools::fibers::condition_variable cv;
  thread_pool pool(1);
  SUBCASE("fiber: wait_for times out and the worker stays free meanwhile") {
    std::atomic<bool> other_ran{false};
    const auto status = pool.run([&] {
      auto other = pool.spawn([&] { other_ran = true; });
      std::unique_lock lock(m);
      const auto s = cv.wait_for(lock, 30ms);
      CHECK(lock.owns_lock());
      other.join();
      return s;
    });
    CHECK(status == std::cv_status::timeout);
    CHECK(other_ran.load());
  }
  SUBCASE("fiber: a notify before the deadline wins, and the timer is cancelled") {
    const bool got = pool.run([&] {
      bool flag = false;
      auto notifier = pool.spawn([&] {
        pools::fibers::this_fiber::sleep_for(5ms);
        {
          std::lock_guard lock(m);
          flag = true;
        }
        cv.notify_all();
      });
      std::unique_lock lock(m);
      const bool ok = cv.wait_for(lock, 10s, [&] { return flag; });
      lock.unlock();
      notifier.join();
      return ok;
    });
    CHECK(got);
  }
  SUBCASE("plain thread: wait_until with a predicate that never holds") {
    std::unique_lock lock(m);
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(cv.wait_until(lock, start + 20ms, [] { return false; }));
    CHECK(std::chrono::steady_clock::now() - start >= 20ms);
  }
}

TEST_CASE("condition_variable: many timed waiters racing notifications never lose a wake-up") {
  // Each round: waiters with short deadlines, notifications arriving around the deadline. Every
  // waiter must return exactly once, either notified or timed out, and the structures must be
  // clean afterwards (ASan/TSan check the rest).
  thread_pool pool(2);
  pools::fibers::mutex m;
  pools::fibers::condition_variable cv;
  const int rounds = static_cast<int>(fibers_test::scaled(50, 5));
  std::atomic<int> returned{0};
  for (int r = 0; r < rounds; ++r) {
    pools::fibers::latch done(8);
    for (int i = 0; i < 8; ++i) {
      pool.post([&, i] {
        std::unique_lock lock(m);
        (void)cv.wait_for(lock, std::chrono::microseconds(200 * (i + 1)));
        returned.fetch_add(1);
        done.count_down();
      });
    }
    for (int k = 0; k < 4; ++k) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      cv.notify_one();
    }
    cv.notify_all();
    done.wait();
  }
  CHECK(returned.load() == rounds * 8);
}
