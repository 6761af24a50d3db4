// SPDX-License-Identifier: MIT
// Task priorities: priority_thread_pool orders by priority, then by submission; thread_pool has
// no priority parameter at all (it is not a runtime flag that costs a branch, it is absent).
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <mutex>
#include <semaphore>
#include <vector>

#include "test_support.hpp"

namespace pf = pools::futures;
using namespace futures_test;

namespace {
template <class Pool>
concept takes_priority = requires(Pool& p) { p.detach_task(pf::pr::high, [] {}); };
}  // namespace

static_assert(takes_priority<pf::priority_thread_pool>);
static_assert(!takes_priority<pf::thread_pool>, "the default pool must not pay for priorities");

TEST_CASE("priorities: higher first, equal priorities in submission order") {
  pf::priority_thread_pool pool(1);  // one worker: the run order is the queue order
  pool.pause();
  std::mutex m;
  std::vector<int> order;
  auto record = [&](int id) {
    std::lock_guard lock(m);
    order.push_back(id);
  };
  pool.detach_task(pf::pr::low, record, 1);
  pool.detach_task(record, 2);  // no priority: pr::normal
  pool.detach_task(pf::pr::highest, record, 3);
  pool.detach_task(pf::pr::low, record, 4);
  auto f = pool.submit_task(pf::pr::high, [&] { record(5); });
  pool.detach_task(pf::priority_t{1}, record, 6);
  pool.detach_task(pf::pr::lowest, record, 7);
  pool.detach_task(record, 8);
  pool.detach_task(pf::pr::highest, record, 9);
  pool.unpause();
  CHECK(pool.wait_for(patience));
  f.get();
  CHECK(order == std::vector<int>{3, 9, 5, 6, 2, 8, 1, 4, 7});
}

TEST_CASE("priorities: loops take a priority for all their tasks") {
  pf::priority_thread_pool pool(1);
  pool.pause();
  std::mutex m;
  std::vector<char> order;
  auto record = [&](char c) {
    std::lock_guard lock(m);
    order.push_back(c);
  };
  pool.detach_loop(pf::pr::low, 0, 4, [&](int) { record('l'); }, 2);
  pool.detach_blocks(pf::pr::high, 0, 4, [&](int, int) { record('b'); }, 2);
  pool.detach_sequence(pf::pr::highest, 0, 2, [&](int) { record('s'); });
  auto mf = pool.submit_sequence(pf::pr::lowest, 0, 2, [&](int i) {
    record('z');
    return i;
  });
  auto mb = pool.submit_blocks(pf::pr::normal, 0, 2, [&](int, int) { record('n'); }, 1);
  auto ml = pool.submit_loop(pf::pr::normal, 0, 1, [&](int) { record('m'); });
  pool.unpause();
  CHECK(mf.get() == std::vector<int>{0, 1});
  mb.get();
  ml.get();
  CHECK(pool.wait_for(patience));
  // loop of 4 in 2 blocks: 'l' twice per block.
  CHECK(order == std::vector<char>{'s', 's', 'b', 'b', 'n', 'm', 'l', 'l', 'l', 'l', 'z', 'z'});
}

TEST_CASE("thread_pool without priorities is strictly FIFO") {
  pf::thread_pool pool(1);
  pool.pause();
  std::vector<int> order;  // one worker: no lock needed, wait() publishes
  for (int i = 0; i < 1000; ++i) pool.detach_task([&order, i] { order.push_back(i); });
  pool.unpause();
  CHECK(pool.wait_for(patience));
  REQUIRE(order.size() == 1000);
  for (int i = 0; i < 1000; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("priority_thread_pool: the same behaviour under load (many producers, counts, wait)") {
  pf::priority_thread_pool pool(3);
  const std::size_t per = scaled(30'000);
  std::atomic<std::size_t> ran{0};
  {
    std::vector<std::jthread> producers;
    for (int p = 0; p < 3; ++p) {
      producers.emplace_back([&, p] {
        for (std::size_t i = 0; i < per; ++i) {
          pool.detach_task(
              pf::priority_t{static_cast<std::int8_t>((p * 37 + static_cast<int>(i)) % 256 - 128)},
              [&] { ran.fetch_add(1, std::memory_order_relaxed); });
        }
      });
    }
  }
  CHECK(pool.wait_for(patience));
  CHECK(ran.load() == 3 * per);
  CHECK(pool.get_tasks_total() == 0);
}
