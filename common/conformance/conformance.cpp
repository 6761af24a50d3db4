// SPDX-License-Identifier: MIT
// The pools::Executor conformance suite. Compiled once per registered variant by
// pools_add_conformance() (cmake/pools.cmake), with POOLS_CONFORMANCE_TYPES naming that variant's
// executor types; every TEST_CASE_TEMPLATE below runs for each of them. The contract being
// checked is written down in common/include/pools/executor.hpp.
#include <doctest/doctest.h>

#define POOLS_CONFORMANCE_NAME(...) TYPE_TO_STRING(__VA_ARGS__)
#include <pools/executor.hpp>
#include <pools/parallel_for.hpp>
#include <pools/submit.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/wait_group.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pools_conformance_types.hpp"

namespace {

constexpr std::size_t kThreads = 4;  // more than the CI machine's cores: oversubscription is part of life

template <class E>
std::unique_ptr<E> make_executor(std::size_t threads = kThreads) {
  static_assert(pools::Executor<E>, "registered type does not satisfy pools::Executor");
  return std::make_unique<E>(threads);
}

#if defined(POOLS_TSAN)
constexpr bool tsan = true;
#else
constexpr bool tsan = false;
#endif
// Under an emulator (the arm64 preset's qemu-aarch64, cmake/pools.cmake) every thread start costs
// what it costs under TSan: the thread-per-task executors get TSan's smaller n.
#if defined(POOLS_EMULATED)
constexpr bool slow_thread_start = true;
#else
constexpr bool slow_thread_start = tsan;
#endif

// Executors that start a thread per task cannot be asked for a million tasks in a test run; under
// ThreadSanitizer even fewer, as TSan keeps per-thread clock state for every thread ever started
// and runs out of it after some tens of thousands. The same state per fiber makes executors with
// a fiber per task (executor_traits::context_per_task) too slow for a million under TSan: a
// hundredth. Other pools always get the full n.
template <class E>
constexpr std::size_t scaled(std::size_t n) {
  using traits = pools::executor_traits<E>;
  if constexpr (!traits::reuses_threads) {
    return slow_thread_start ? std::max<std::size_t>(n / 1000, 100) : std::max<std::size_t>(n / 50, 1000);
  } else if constexpr (tsan && traits::context_per_task) {
    return std::max<std::size_t>(n / 100, 1000);
  } else {
    return n;
  }
}

// Counts every run of every task id; `check` fails with the first id not run exactly once.
struct run_counter {
  explicit run_counter(std::size_t n) : runs(n) {}
  void hit(std::size_t id) { runs[id].fetch_add(1, std::memory_order_relaxed); }
  void check() const {
    std::size_t wrong = 0, first_wrong = runs.size();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].load(std::memory_order_relaxed) != 1) {
        if (wrong++ == 0) first_wrong = i;
      }
    }
    INFO("first task not run exactly once: #" << first_wrong);
    CHECK(wrong == 0);
  }
  std::vector<std::atomic<std::uint8_t>> runs;
};

}  // namespace

TEST_CASE_TEMPLATE("conformance: satisfies the concept and reports its concurrency", E,
                   POOLS_CONFORMANCE_TYPES) {
  static_assert(pools::Executor<E>);
  auto ex = make_executor<E>();
  CHECK(ex->concurrency() >= 1);
}

TEST_CASE_TEMPLATE("conformance: 1,000,000 posted tasks each run exactly once", E, POOLS_CONFORMANCE_TYPES) {
  const std::size_t n = scaled<E>(1'000'000);
  run_counter counter(n);
  pools::wait_group wg(static_cast<std::ptrdiff_t>(n));
  auto ex = make_executor<E>();
  for (std::size_t i = 0; i < n; ++i) {
    ex->post([&counter, &wg, i] {
      counter.hit(i);
      wg.done();
    });
  }
  wg.wait();
  counter.check();
}

TEST_CASE_TEMPLATE("conformance: tasks post tasks (a tree and a long chain)", E, POOLS_CONFORMANCE_TYPES) {
  auto ex = make_executor<E>();

  SUBCASE("binary tree of 2^15 - 1 nodes (fewer for thread-per-task): every node runs once") {
    static constexpr int depth = scaled<E>(1'000'000) == 1'000'000 ? 14 : 8;
    const std::size_t nodes = (std::size_t{1} << (depth + 1)) - 1;
    run_counter counter(nodes);
    pools::wait_group wg(static_cast<std::ptrdiff_t>(nodes));
    struct node {
      static void run(E& ex, run_counter& c, pools::wait_group& wg, std::size_t id, int level) {
        c.hit(id);
        if (level < depth) {
          ex.post([&ex, &c, &wg, id, level] { run(ex, c, wg, 2 * id + 1, level + 1); });
          ex.post([&ex, &c, &wg, id, level] { run(ex, c, wg, 2 * id + 2, level + 1); });
        }
        wg.done();
      }
    };
    ex->post([&] { node::run(*ex, counter, wg, 0, 0); });
    wg.wait();
    counter.check();
  }

  SUBCASE("a chain of 100,000 re-posts runs in order without growing the stack") {
    const std::size_t length = scaled<E>(100'000);
    std::atomic<std::size_t> next{0};
    std::atomic<bool> in_order{true};
    pools::wait_group wg(1);
    struct link {
      static void run(E& ex, std::atomic<std::size_t>& next, std::atomic<bool>& ok, pools::wait_group& wg,
                      std::size_t i, std::size_t length) {
        if (next.fetch_add(1) != i) ok = false;
        if (i + 1 < length) {
          ex.post([&ex, &next, &ok, &wg, i, length] { run(ex, next, ok, wg, i + 1, length); });
        } else {
          wg.done();
        }
      }
    };
    ex->post([&] { link::run(*ex, next, in_order, wg, 0, length); });
    wg.wait();
    CHECK(next.load() == length);
    CHECK(in_order.load());
  }
}

TEST_CASE_TEMPLATE("conformance: 8 threads post at once", E, POOLS_CONFORMANCE_TYPES) {
  constexpr std::size_t posters = 8;
  const std::size_t per_poster = scaled<E>(100'000);
  run_counter counter(posters * per_poster);
  pools::wait_group wg(static_cast<std::ptrdiff_t>(posters * per_poster));
  auto ex = make_executor<E>();
  std::atomic<bool> go{false};
  // A post that throws must fail this case, not escape a thread and terminate the whole suite
  // (the cases after it could not report): the first exception is rethrown on the test's thread.
  std::mutex failed_mutex;
  std::exception_ptr failed;
  {
    std::vector<std::jthread> threads;
    threads.reserve(posters);
    for (std::size_t p = 0; p < posters; ++p) {
      threads.emplace_back([&, p] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        try {
          for (std::size_t i = 0; i < per_poster; ++i) {
            const std::size_t id = p * per_poster + i;
            ex->post([&counter, &wg, id] {
              counter.hit(id);
              wg.done();
            });
          }
        } catch (...) {
          const std::lock_guard lock(failed_mutex);
          if (!failed) failed = std::current_exception();
        }
      });
    }
    go.store(true, std::memory_order_release);
  }
  if (failed) std::rethrow_exception(failed);
  wg.wait();
  counter.check();
}

TEST_CASE_TEMPLATE("conformance: submit forwards values and exceptions", E, POOLS_CONFORMANCE_TYPES) {
  auto ex = make_executor<E>();
  SUBCASE("value") {
    CHECK(pools::submit(*ex, [](int a, int b) { return a * b; }, 6, 7).get() == 42);
  }
  SUBCASE("void") {
    std::atomic<int> touched{0};
    pools::submit(*ex, [&] { touched = 1; }).get();
    CHECK(touched.load() == 1);
  }
  SUBCASE("move-only argument and result") {
    auto p = pools::submit(
        *ex, [](std::unique_ptr<int> v) { return std::make_unique<int>(*v + 1); }, std::make_unique<int>(41));
    CHECK(*p.get() == 42);
  }
  SUBCASE("exception type and message survive") {
    auto f = pools::submit(*ex, []() -> int { throw std::invalid_argument("bad input 17"); });
    CHECK_THROWS_WITH_AS(f.get(), "bad input 17", std::invalid_argument);
  }
  SUBCASE("many futures, each with its own result") {
    const std::size_t n = scaled<E>(1000);
    std::vector<std::future<std::size_t>> futures;
    futures.reserve(n);
    for (std::size_t i = 0; i < n; ++i) futures.push_back(pools::submit(*ex, [i] { return i * i; }));
    for (std::size_t i = 0; i < futures.size(); ++i) CHECK(futures[i].get() == i * i);
  }
}

namespace {
std::atomic<int> reported_exceptions{0};
std::atomic<int> other_exceptions{0};  // reported, but not thrown by the test's tasks
void count_exception(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::runtime_error& ex) {
    (std::string(ex.what()) == "posted task failed" ? reported_exceptions : other_exceptions).fetch_add(1);
  } catch (...) {
    other_exceptions.fetch_add(1);  // the executor reported a failure of its own
  }
}
}  // namespace

TEST_CASE_TEMPLATE("conformance: an exception in a posted task is reported and the executor goes on", E,
                   POOLS_CONFORMANCE_TYPES) {
  reported_exceptions = 0;
  other_exceptions = 0;
  auto previous = pools::set_unhandled_exception_handler(&count_exception);
  {
    auto ex = make_executor<E>();
    pools::wait_group wg(100);
    std::atomic<int> ran{0};
    for (int i = 0; i < 100; ++i) {
      ex->post([&, i] {
        ran.fetch_add(1);
        wg.done();
        if (i % 10 == 0) throw std::runtime_error("posted task failed");
      });
    }
    wg.wait();
    CHECK(ran.load() == 100);
    CHECK(pools::submit(*ex, [] { return 7; }).get() == 7);  // still alive
  }  // destruction after the throws: every report has been made
  CHECK(reported_exceptions.load() == 10);
  CHECK(other_exceptions.load() == 0);
  pools::set_unhandled_exception_handler(previous);
}

TEST_CASE_TEMPLATE("conformance: destruction drains queued work, including work posted while draining", E,
                   POOLS_CONFORMANCE_TYPES) {
  const std::size_t queued = scaled<E>(20'000);
  std::atomic<std::size_t> ran{0}, follow_ups{0};
  std::atomic<bool> release{false};
  // Each worker is held by a blocker so the queue is full when the destructor starts. The
  // releasing thread exists before the first post: for an inline executor the blocker runs on
  // this thread and must be freed by someone else. The assertion does not depend on timing.
  std::jthread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release.store(true, std::memory_order_release);
  });
  {
    auto ex = make_executor<E>();
    for (std::size_t w = 0; w < ex->concurrency() && w < 64; ++w) {
      ex->post([&] {
        while (!release.load(std::memory_order_acquire)) std::this_thread::yield();
      });
    }
    E* raw = ex.get();
    for (std::size_t i = 0; i < queued; ++i) {
      ex->post([&, raw, i] {
        ran.fetch_add(1, std::memory_order_relaxed);
        if (i % 100 == 0) raw->post([&] { follow_ups.fetch_add(1, std::memory_order_relaxed); });
      });
    }
    ex.reset();  // the destructor runs while blockers hold the workers
  }
  CHECK(ran.load() == queued);
  CHECK(follow_ups.load() == (queued + 99) / 100);
}

TEST_CASE_TEMPLATE("conformance: tasks run on at most concurrency() threads at once", E,
                   POOLS_CONFORMANCE_TYPES) {
  auto ex = make_executor<E>();
  const std::size_t n = scaled<E>(20'000);
  std::mutex ids_mutex;
  std::set<std::thread::id> ids;
  std::atomic<std::size_t> running{0}, peak{0};
  pools::wait_group wg(static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    ex->post([&] {
      const std::size_t now = running.fetch_add(1) + 1;
      std::size_t seen = peak.load();
      while (now > seen && !peak.compare_exchange_weak(seen, now)) {
      }
      {
        std::lock_guard lock(ids_mutex);
        ids.insert(std::this_thread::get_id());
      }
      running.fetch_sub(1);
      wg.done();
    });
  }
  wg.wait();
  CHECK(peak.load() >= 1);
  CHECK(peak.load() <= ex->concurrency());
  if constexpr (pools::executor_traits<E>::reuses_threads) {
    CHECK(ids.size() <= ex->concurrency());
  }
}

TEST_CASE_TEMPLATE("conformance: parallel_for touches every index exactly once", E, POOLS_CONFORMANCE_TYPES) {
  auto ex = make_executor<E>();

  auto check_range = [&](auto first, auto last, std::size_t blocks) {
    using I = std::common_type_t<decltype(first), decltype(last)>;
    const std::size_t expected = last > first ? static_cast<std::size_t>(last - first) : 0;
    run_counter counter(expected);
    std::atomic<std::size_t> total{0};
    pools::parallel_for(
        *ex, first, last,
        [&](I i) {
          counter.hit(static_cast<std::size_t>(i - static_cast<I>(first)));
          total.fetch_add(1, std::memory_order_relaxed);
        },
        blocks);
    CHECK(total.load() == expected);
    counter.check();
  };

  SUBCASE("ordinary range, default blocks") {
    check_range(0, 100'000, 0);
  }
  SUBCASE("empty range") {
    check_range(5, 5, 0);
  }
  SUBCASE("reversed range does nothing") {
    check_range(10, 0, 0);
  }
  SUBCASE("negative bounds") {
    check_range(-5000, 5000, 7);
  }
  SUBCASE("more blocks than indices") {
    check_range(0, 3, 64);
  }
  SUBCASE("range at the bottom of int") {
    check_range(INT_MIN, INT_MIN + 1000, 3);
  }
  SUBCASE("range at the top of int64") {
    check_range(INT64_MAX - 1000, INT64_MAX, 4);
  }
  SUBCASE("unsigned char range") {
    check_range(std::uint8_t{0}, std::uint8_t{255}, 10);
  }
  SUBCASE("mixed index types") {
    check_range(short{-3}, 1000L, 5);
  }

  SUBCASE("the first exception reaches the caller after all blocks ran") {
    std::atomic<int> ran{0};
    CHECK_THROWS_AS(pools::parallel_for(
                        *ex, 0, 100,
                        [&](int i) {
                          ran.fetch_add(1);
                          if (i == 50) throw std::out_of_range("index 50");
                        },
                        10),
                    std::out_of_range);
    // 10 blocks of 10: the block [50, 60) stops at its throw, the nine others run completely.
    CHECK(ran.load() == 91);
  }
}
