// SPDX-License-Identifier: MIT
// textbook_pool: spawn/join values and exceptions, joins that suspend fibers (not threads), yield,
// migration between threads, drain on destruction. The Executor contract itself is checked by the
// conformance suite (conformance_fibers runs it over textbook_pool too).
#include <doctest/doctest.h>

#include <pools/executor.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/testing/zero_threads.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::fibers::textbook_pool;

static_assert(pools::Executor<textbook_pool>);

namespace {
using fibers_test::custom_error;
using fibers_test::fib;
using fibers_test::thread_id_now;

// A chain: each fiber spawns the next and suspends in its join.
int chain(textbook_pool& pool, int left) {
  if (left == 0) return 0;
  return pool.spawn([&pool, left] { return chain(pool, left - 1); }).join() + 1;
}
}  // namespace

TEST_CASE("textbook_pool: zero threads is one per hardware thread; concurrency() is the thread count") {
  pools::testing::check_zero_threads_means_every_core([] { return textbook_pool(0); });
  textbook_pool pool(3);
  CHECK(pool.concurrency() == 3);
}

TEST_CASE("textbook_pool: join returns values of every kind, from a plain thread and from a fiber") {
  textbook_pool pool(2);
  CHECK(pool.spawn([] { return 6 * 7; }).join() == 42);
  std::atomic<int> touched{0};
  pool.spawn([&] { touched = 1; }).join();
  CHECK(touched.load() == 1);
  CHECK(*pool.spawn([] { return std::make_unique<int>(5); }).join() == 5);
  CHECK(pool.spawn([] { return std::string(100, 'x'); }).join() == std::string(100, 'x'));
  int target = 0;
  int& ref = pool.spawn([&target]() -> int& { return target; }).join();
  CHECK(&ref == &target);
  // From a fiber, with a move-only callable.
  auto owned = std::make_unique<int>(9);
  CHECK(pool.spawn([&pool, p = std::move(owned)]() mutable {
              return pool.spawn([p = std::move(p)] { return *p + 1; }).join();
            })
            .join() == 10);
}

TEST_CASE("textbook_pool: join rethrows the fiber's exception with its type and message") {
  textbook_pool pool(2);
  SUBCASE("to a plain thread") {
    CHECK_THROWS_WITH_AS(pool.spawn([]() -> int { throw std::invalid_argument("bad input 17"); }).join(),
                         "bad input 17", std::invalid_argument);
  }
  SUBCASE("to a fiber, whose join suspended first") {
    const int code = pool.spawn([&pool] {
                           auto child = pool.spawn([]() -> int {
                             textbook_pool::yield();  // still running when the parent joins
                             throw custom_error(7);
                           });
                           int result = -1;
                           try {
                             child.join();
                           } catch (const custom_error& e) {
                             result = e.code;
                           }
                           return result;
                         })
                         .join();
    CHECK(code == 7);
  }
  SUBCASE("through two levels of joins") {
    CHECK_THROWS_AS(
        pool.spawn([&pool] {
              return pool.spawn([&pool] { return pool.spawn([]() -> int { throw custom_error(3); }).join(); })
                  .join();
            })
            .join(),
        custom_error);
  }
  SUBCASE("a handle joins once; a second join is a future_error") {
    auto h = pool.spawn([] { return 1; });
    CHECK(h.joinable());
    CHECK(h.join() == 1);
    CHECK_FALSE(h.joinable());
    CHECK_THROWS_AS(h.join(), std::future_error);
    textbook_pool::handle<int> empty;
    CHECK_FALSE(empty.joinable());
    CHECK_THROWS_AS(empty.join(), std::future_error);
  }
}

TEST_CASE("textbook_pool: an exception escaping a posted fiber is reported, and the pool goes on") {
  fibers_test::reported_exceptions reported("posted failure");
  {
    textbook_pool pool(2);
    for (int i = 0; i < 10; ++i) pool.post([] { throw std::runtime_error("posted failure"); });
    CHECK(pool.spawn([] { return 5; }).join() == 5);
  }  // drained: every posted fiber has run
  CHECK(reported.seen() == 10);
}

TEST_CASE("textbook_pool: joins suspend fibers, not threads: nesting far deeper than the thread count") {
  // With 2 threads, a join that blocked its thread would deadlock at the third level.
  textbook_pool pool(2);
  CHECK(pool.spawn([&pool] { return fib(pool, 15); }).join() == 610);
  const int depth = static_cast<int>(fibers_test::scaled(2000, 4));
  CHECK(pool.spawn([&pool, depth] { return chain(pool, depth); }).join() == depth);
}

TEST_CASE("textbook_pool: a fiber of another pool may join (it blocks its worker)") {
  textbook_pool a(2), b(1);
  CHECK(a.spawn([&b] { return b.spawn([] { return 3; }).join() + 1; }).join() == 4);
}

TEST_CASE("textbook_pool: yield lets the other ready fibers run first") {
  // One thread: the spinner can only see the flag if its yield lets the setter run.
  textbook_pool pool(1);
  std::atomic<bool> flag{false};
  const long turns = pool.spawn([&] {
                           pool.post([&] { flag = true; });
                           long n = 0;
                           while (!flag.load() && n < 1'000'000) {
                             textbook_pool::yield();
                             ++n;
                           }
                           return n;
                         })
                         .join();
  CHECK(flag.load());
  CHECK(turns == 1);       // FIFO: the setter was queued before the spinner went to the back
  textbook_pool::yield();  // on a plain thread: returns at once
}

TEST_CASE("textbook_pool: a suspended fiber may resume on another thread, with its locals intact") {
  // Fibers yield over and over on 2 threads; whichever worker is free resumes the next one, so
  // sooner or later one comes back on the other thread. Rounds go on until a migration is seen
  // or the time bound passes: the test does not depend on one lucky schedule.
  textbook_pool pool(2);
  std::atomic<int> migrations{0}, corrupted{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int rounds = 0;
  while (migrations.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    ++rounds;
    std::vector<textbook_pool::handle<void>> fibers;
    for (int f = 0; f < 8; ++f) {
      fibers.push_back(pool.spawn([&, f] {
        const std::uint64_t local = 0xC0FFEE00u + static_cast<std::uint64_t>(f);
        for (int i = 0; i < 50; ++i) {
          const auto before = thread_id_now();
          textbook_pool::yield();
          if (thread_id_now() != before) migrations.fetch_add(1);
          if (local != 0xC0FFEE00u + static_cast<std::uint64_t>(f)) corrupted.fetch_add(1);
        }
      }));
    }
    for (auto& h : fibers) h.join();
  }
  CHECK(corrupted.load() == 0);
  CHECK(migrations.load() > 0);
  MESSAGE("migrations observed: " << migrations.load() << " in " << rounds << " round(s) of 8 x 50 yields");
}

TEST_CASE("textbook_pool: destruction drains every fiber, including ones started while draining") {
  std::atomic<int> ran{0};
  const int roots = static_cast<int>(fibers_test::scaled(2000));
  {
    textbook_pool pool(2);
    for (int i = 0; i < roots; ++i) {
      pool.post([&] {
        ran.fetch_add(1);
        // Started by a fiber, maybe after the destructor began; suspends in a join and yields.
        pool.post([&] {
          auto child = pool.spawn([&] {
            textbook_pool::yield();
            ran.fetch_add(1);
          });
          child.join();
          ran.fetch_add(1);
        });
      });
    }
    // A fiber that is suspended (in join) when the destructor starts.
    pool.post([&] { ran.fetch_add(pool.spawn([] { return 1; }).join()); });
  }
  CHECK(ran.load() == 3 * roots + 1);
}

TEST_CASE("textbook_pool: a handle dropped without join leaves the fiber running; the drain still waits") {
  std::atomic<int> ran{0};
  {
    textbook_pool pool(2);
    for (int i = 0; i < 100; ++i) {
      (void)pool.spawn([&] {
        textbook_pool::yield();
        ran.fetch_add(1);
      });
    }
  }
  CHECK(ran.load() == 100);
}
