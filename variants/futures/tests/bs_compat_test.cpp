// SPDX-License-Identifier: MIT
// What the futures pool offers for code written against BS::thread_pool: init functions counted
// by wait(), the init overloads, BS's loop index rule, bulk submission, synced_stream, the
// version constants, BS-style integer priorities (pools/futures/bs_compat.hpp) and the native
// extensions (pools/futures/native.hpp). BS's own test program runs as bs_suite_futures.
#include <doctest/doctest.h>

#include <pools/futures/bs_compat.hpp>
#include <pools/futures/index_type.hpp>
#include <pools/futures/native.hpp>
#include <pools/futures/synced_stream.hpp>
#include <pools/futures/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <latch>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "test_support.hpp"

using pools::futures::priority_thread_pool;
using pools::futures::thread_pool;
using namespace futures_test;
using namespace std::chrono_literals;

// ---- init functions count as tasks ------------------------------------------------------------

TEST_CASE("bs compat: wait() right after construction returns only once every init has run") {
  constexpr std::size_t n = 3;
  std::atomic<std::size_t> inits{0};
  // Each init sleeps, so a wait() that did not count them would return first and see fewer.
  thread_pool pool(n, [&] {
    std::this_thread::sleep_for(20ms);
    inits.fetch_add(1);
  });
  pool.wait();
  CHECK(inits.load() == n);
}

TEST_CASE("bs compat: a worker's init counts as a running task until it returns") {
  std::latch release(1);
  std::atomic<std::size_t> inits{0};
  thread_pool pool(2, [&] {
    release.wait();
    inits.fetch_add(1);
  });
  CHECK(pool.get_tasks_running() == 2);
  CHECK(pool.get_tasks_total() == 2);
  CHECK_FALSE(pool.wait_for(50ms));
  release.count_down();
  REQUIRE(pool.wait_for(patience));
  CHECK(inits.load() == 2);
  CHECK(pool.get_tasks_total() == 0);
}

TEST_CASE("bs compat: wait() after reset(n, init) returns only once the new inits have run") {
  thread_pool pool(1);
  std::atomic<std::size_t> inits{0};
  pool.reset(3, [&](std::size_t) {
    std::this_thread::sleep_for(20ms);
    inits.fetch_add(1);
  });
  pool.wait();
  CHECK(inits.load() == 3);
  CHECK(pool.get_thread_count() == 3);
}

TEST_CASE("bs compat: thread_pool(init) starts hardware_concurrency workers, each running init(index)") {
  std::mutex m;
  std::set<std::size_t> indices;
  thread_pool pool([&](std::size_t i) {
    const std::lock_guard lock(m);
    indices.insert(i);
  });
  pool.wait();
  const std::size_t expected = std::max<std::size_t>(std::thread::hardware_concurrency(), 1);
  CHECK(pool.get_thread_count() == expected);
  const std::lock_guard lock(m);
  REQUIRE(indices.size() == expected);
  CHECK(*indices.rbegin() == expected - 1);
}

TEST_CASE("bs compat: reset(init) replaces the init function and runs it on every new worker") {
  std::atomic<int> first{0}, second{0};
  thread_pool pool(2, [&] { first.fetch_add(1); });
  pool.wait();
  pool.reset([&] { second.fetch_add(1); });
  pool.wait();
  CHECK(first.load() == 2);
  CHECK(second.load() == static_cast<int>(pool.get_thread_count()));
}

// ---- BS's loop index rule ---------------------------------------------------------------------

using pools::futures::common_index_type_t;
static_assert(std::is_same_v<common_index_type_t<std::int8_t, std::int32_t>, std::int32_t>);
static_assert(std::is_same_v<common_index_type_t<std::uint16_t, std::uint8_t>, std::uint16_t>);
static_assert(std::is_same_v<common_index_type_t<std::int8_t, std::uint8_t>, std::int16_t>);
static_assert(std::is_same_v<common_index_type_t<std::int16_t, std::uint8_t>, std::int16_t>);
static_assert(std::is_same_v<common_index_type_t<std::uint16_t, std::int16_t>, std::int32_t>);
static_assert(std::is_same_v<common_index_type_t<std::int32_t, std::uint32_t>, std::int64_t>);
static_assert(std::is_same_v<common_index_type_t<std::uint32_t, std::int8_t>, std::int64_t>);
static_assert(std::is_same_v<common_index_type_t<std::int64_t, std::uint32_t>, std::int64_t>);
static_assert(std::is_same_v<common_index_type_t<std::int64_t, std::uint64_t>, std::uint64_t>);
static_assert(std::is_same_v<common_index_type_t<std::uint64_t, std::int8_t>, std::uint64_t>);
// std::common_type would have made these unsigned (and a negative first bound huge).
static_assert(std::is_same_v<std::common_type_t<int, unsigned>, unsigned>);
static_assert(std::is_signed_v<common_index_type_t<int, unsigned>>);

TEST_CASE("bs compat: detach_loop(-5, 10u, f) runs 15 iterations, -5 .. 9") {
  thread_pool pool(2);
  std::mutex m;
  std::vector<std::int64_t> seen;
  pool.detach_loop(-5, 10u, [&](auto i) {
    static_assert(std::is_same_v<decltype(i), std::int64_t>);
    const std::lock_guard lock(m);
    seen.push_back(i);
  });
  pool.wait();
  std::sort(seen.begin(), seen.end());
  std::vector<std::int64_t> expected(15);
  std::iota(expected.begin(), expected.end(), -5);
  CHECK(seen == expected);
}

TEST_CASE("bs compat: submit_sequence and submit_blocks over mixed-signedness bounds") {
  thread_pool pool(2);
  const auto squares =
      pool.submit_sequence(std::int8_t{-3}, std::uint8_t{3}, [](std::int16_t i) { return i * i; }).get();
  CHECK(squares == std::vector<int>{9, 4, 1, 0, 1, 4});
  const auto sums = pool.submit_blocks(-10, 10u,
                                       [](std::int64_t b, std::int64_t e) {
                                         std::int64_t s = 0;
                                         for (auto i = b; i < e; ++i) s += i;
                                         return s;
                                       })
                        .get();
  CHECK(std::accumulate(sums.begin(), sums.end(), std::int64_t{0}) == -10);
}

// ---- bulk submission --------------------------------------------------------------------------

TEST_CASE("bs compat: detach_bulk runs every callable of a range once and moves them out") {
  thread_pool pool(2);
  std::atomic<int> runs{0};
  std::vector<std::function<void()>> tasks;
  for (int i = 0; i < 100; ++i) tasks.emplace_back([&runs, i] { runs.fetch_add(i); });
  pool.detach_bulk(tasks);
  pool.wait();
  CHECK(runs.load() == 4950);
  CHECK(std::none_of(tasks.begin(), tasks.end(), [](const auto& f) { return static_cast<bool>(f); }));
  pool.detach_bulk(tasks.begin(), tasks.begin());  // an empty range queues nothing
  CHECK(pool.get_tasks_total() == 0);
}

TEST_CASE("bs compat: submit_bulk returns the results in range order, exceptions in their futures") {
  thread_pool pool(2);
  std::vector<std::function<int()>> tasks;
  for (int i = 0; i < 10; ++i) tasks.emplace_back([i] { return i * 10; });
  auto futures = pool.submit_bulk(tasks.begin(), tasks.end());
  REQUIRE(futures.size() == 10);
  const std::vector<int> results = futures.get();
  CHECK(results == std::vector<int>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90});
  std::function<int()> throwing[] = {[] { return 1; }, []() -> int { throw std::runtime_error("bulk"); }};
  auto failing = pool.submit_bulk(throwing);
  CHECK_THROWS_WITH_AS(static_cast<void>(failing.get()), "bulk", std::runtime_error);
}

TEST_CASE("bs compat: bulk submission with a priority runs the higher one first") {
  priority_thread_pool pool(1);
  pool.pause();
  std::vector<int> order;  // one worker: no lock needed
  std::vector<std::function<void()>> low = {[&] { order.push_back(1); }, [&] { order.push_back(2); }};
  std::vector<std::function<void()>> high = {[&] { order.push_back(3); }};
  pool.detach_bulk(pools::futures::pr::low, low);
  pool.detach_bulk(pools::futures::pr::high, high.begin(), high.end());
  pool.unpause();
  pool.wait();
  CHECK(order == std::vector<int>{3, 1, 2});
}

// ---- synced_stream ----------------------------------------------------------------------------

TEST_CASE("bs compat: synced_stream keeps each println whole, on every stream") {
  std::ostringstream a, b;
  pools::futures::synced_stream out(a, b);
  {
    thread_pool pool(4);
    pool.detach_sequence(0, 200, [&](int i) { out.println("line ", i, " of ", 200); });
    pool.wait();
  }
  CHECK(a.str() == b.str());
  std::istringstream lines(a.str());
  std::string line;
  std::set<std::string> seen;
  while (std::getline(lines, line)) seen.insert(line);
  REQUIRE(seen.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(seen.count("line " + std::to_string(i) + " of 200") == 1);

  out.remove_stream(b);
  out.print("x", pools::futures::synced_stream::endl);
  CHECK(b.str() == a.str().substr(0, b.str().size()));
  CHECK(a.str().size() == b.str().size() + 2);
  CHECK(out.get_streams().size() == 1);
}

// ---- the compat layer itself --------------------------------------------------------------------

static_assert(BS_THREAD_POOL_VERSION_MAJOR == 5 && BS_THREAD_POOL_VERSION_MINOR == 1);
static_assert(BS::thread_pool_version == BS::version(5, 1, 0));
static_assert(BS::thread_pool_version > BS::version(5, 0, 9) &&
              BS::thread_pool_version < BS::version(6, 0, 0));
static_assert(std::is_same_v<BS::priority_t, std::int8_t>);
static_assert(std::is_same_v<decltype(BS::pr::high + 1), int>);  // BS-style arithmetic compiles
static_assert(std::is_base_of_v<thread_pool, BS::thread_pool<>>);
static_assert(std::is_base_of_v<priority_thread_pool, BS::thread_pool<BS::tp::priority | BS::tp::pause>>);

TEST_CASE("bs compat: BS::thread_pool deduces thread_pool<tp::none> and takes BS's signatures") {
  BS::thread_pool pool(2);
  static_assert(std::is_same_v<decltype(pool), BS::thread_pool<BS::tp::none>>);
  CHECK(pool.submit_task([] { return 6 * 7; }, BS::pr::high).get() == 42);  // priority ignored
  std::atomic<int> sum{0};
  pool.detach_loop(0, 10, [&](int i) { sum.fetch_add(i); }, 3);
  pool.wait();
  CHECK(sum.load() == 45);
  CHECK(BS::this_thread::get_index() == std::nullopt);
}

TEST_CASE("bs compat: integer priorities, computed as BS code computes them, order the queue") {
  BS::priority_thread_pool pool(1);
  pool.pause();
  std::vector<int> order;  // one worker
  const int priorities[] = {BS::pr::low, BS::pr::high + 1, BS::pr::normal, BS::pr::highest, BS::pr::lowest};
  for (const int p : priorities) {
    pool.detach_task([&order, p] { order.push_back(p); }, static_cast<BS::priority_t>(p));
  }
  auto last = pool.submit_sequence(0, 1, [](int) { return 0; }, BS::pr::lowest);
  pool.unpause();
  pool.wait();
  CHECK(order == std::vector<int>{127, 65, 0, -64, -128});
  CHECK(last.get() == std::vector<int>{0});
}

// ---- native extensions --------------------------------------------------------------------------

#if defined(__linux__) && !defined(POOLS_PORTABLE)
namespace native = pools::futures::native;
static_assert(native::available && BS::thread_pool_native_extensions == false);  // not asked for here

TEST_CASE("bs compat: worker names set in init are the threads' names, seen through get_native_handles") {
  thread_pool pool(2, [](std::size_t i) { native::set_os_thread_name("fut-" + std::to_string(i)); });
  pool.wait();
  const auto handles = pool.get_native_handles();
  REQUIRE(handles.size() == 2);
  for (std::size_t i = 0; i < handles.size(); ++i) {
    char name[16] = {};
    REQUIRE(pthread_getname_np(handles[i], name, sizeof name) == 0);
    CHECK(std::string(name) == "fut-" + std::to_string(i));
  }
  const auto [index, name] =
      pool.submit_task([] {
            return std::pair(*pools::futures::this_thread::get_index(), native::get_os_thread_name());
          })
          .get();
  CHECK(name == "fut-" + std::to_string(index));
  // Linux keeps 15 bytes; a longer name is refused, not cut.
  CHECK_FALSE(pool.submit_task([] { return native::set_os_thread_name("a-name-of-16-chr"); }).get());
}

TEST_CASE("bs compat: a worker's affinity round-trips, and an empty CPU set is refused") {
  thread_pool pool(1);
  pool.submit_task([] {
        const auto initial = native::get_os_thread_affinity();
        REQUIRE(initial.has_value());
        REQUIRE(std::count(initial->begin(), initial->end(), true) >= 1);
        // Only the first CPU the thread may use: allowed, and read back exactly.
        std::vector<bool> one(initial->size(), false);
        one[static_cast<std::size_t>(std::find(initial->begin(), initial->end(), true) - initial->begin())] =
            true;
        CHECK(native::set_os_thread_affinity(one));
        CHECK(native::get_os_thread_affinity() == one);
        CHECK_FALSE(native::set_os_thread_affinity(std::vector<bool>(initial->size(), false)));
        CHECK(native::set_os_thread_affinity(*initial));
        CHECK(native::get_os_thread_affinity() == initial);
      })
      .get();
  CHECK(native::get_os_process_affinity().has_value());
}

TEST_CASE("bs compat: a worker may lower its own priority, and reads the level back") {
  thread_pool pool(1);
  // Lowering needs no privilege; on a throwaway worker so no other thread of the test is slowed.
  pool.submit_task([] {
        CHECK(native::set_os_thread_priority(native::os_thread_priority::below_normal));
        CHECK(native::get_os_thread_priority() == native::os_thread_priority::below_normal);
        CHECK(native::set_os_thread_priority(native::os_thread_priority::idle));
        CHECK(native::get_os_thread_priority() == native::os_thread_priority::idle);
      })
      .get();
  // The named process levels are nice values: a process at nice 0 reads as normal.
  if (getpriority(PRIO_PROCESS, 0) == 0)
    CHECK(native::get_os_process_priority() == native::os_process_priority::normal);
}
#endif
