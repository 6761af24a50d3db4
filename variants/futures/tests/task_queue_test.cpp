// The two queues on their own: order, segment boundaries, admission, take_all, destruction,
// and many producers against many consumers.
#include <doctest/doctest.h>

#include <pools/futures/fifo_task_queue.hpp>
#include <pools/futures/priority_task_queue.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace futures_test;
using pools::task_function;

namespace {
const auto always = [] { return true; };
}

TEST_CASE("fifo_task_queue: FIFO across many segments, size, empty pops") {
  pools::futures::fifo_task_queue q;
  task_function out;
  CHECK_FALSE(q.try_pop(out, always));
  CHECK(q.size() == 0);
  std::vector<int> order;
  constexpr int n = 1000;  // about eight segments
  for (int i = 0; i < n; ++i) q.push([&order, i] { order.push_back(i); });
  CHECK(q.size() == n);
  CHECK(q.maybe_nonempty());
  // Interleave pops and pushes so that the head crosses segments the tail has recycled.
  for (int i = 0; i < n; ++i) {
    REQUIRE(q.try_pop(out, always));
    out();
    if (i % 3 == 0) q.push([&order, v = n + i] { order.push_back(v); });
  }
  while (q.try_pop(out, always)) out();
  CHECK(q.size() == 0);
  REQUIRE(order.size() == n + (n + 2) / 3);
  for (int i = 0; i < n; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  for (std::size_t k = n; k < order.size(); ++k) CHECK(order[k] == n + 3 * static_cast<int>(k - n));
}

TEST_CASE("fifo_task_queue: a refused admission leaves the task queued") {
  pools::futures::fifo_task_queue q;
  int ran = 0;
  q.push([&] { ++ran; });
  task_function out;
  int asked = 0;
  CHECK_FALSE(q.try_pop(out, [&] {
    ++asked;
    return false;
  }));
  CHECK(asked == 1);
  CHECK(q.size() == 1);
  CHECK(q.try_pop(out, always));
  out();
  CHECK(ran == 1);
}

TEST_CASE("fifo_task_queue: take_all and the destructor destroy tasks without running them") {
  auto token = std::make_shared<int>(0);
  {
    pools::futures::fifo_task_queue q;
    for (int i = 0; i < 300; ++i) q.push([token] {});
    CHECK(token.use_count() == 301);
    auto taken = q.take_all();
    CHECK(taken.size() == 300);
    CHECK(q.size() == 0);
    taken.clear();
    CHECK(token.use_count() == 1);
    for (int i = 0; i < 500; ++i) q.push([token] {});  // left for the destructor
    task_function out;
    for (int i = 0; i < 130; ++i) REQUIRE(q.try_pop(out, always));
    out = nullptr;
    CHECK(token.use_count() == 371);
  }
  CHECK(token.use_count() == 1);
}

namespace {
// A task tells the consumer that ran it who made it, through the consumer's thread_local.
struct origin {
  int producer = -1;
  std::uint64_t index = 0;
};
thread_local origin last_run;
}  // namespace

TEST_CASE("fifo_task_queue: 4 producers x 3 consumers, each task once, per-producer order kept") {
  pools::futures::fifo_task_queue q;
  constexpr int producers = 4, consumers = 3;
  const std::uint64_t per = scaled(200'000);
  const std::uint64_t all = producers * per;
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<int> out_of_order{0};
  std::vector<std::vector<std::atomic<std::uint8_t>>> seen;
  for (int p = 0; p < producers; ++p) seen.emplace_back(per);
  {
    std::vector<std::jthread> threads;
    for (int c = 0; c < consumers; ++c) {
      threads.emplace_back([&] {
        // One queue, FIFO: whatever a single consumer pops from one producer comes in order.
        std::vector<std::int64_t> last(producers, -1);
        task_function out;
        while (consumed.load(std::memory_order_relaxed) < all) {
          if (!q.try_pop(out, always)) {
            std::this_thread::yield();
            continue;
          }
          out();
          out = nullptr;
          const auto p = static_cast<std::size_t>(last_run.producer);
          if (static_cast<std::int64_t>(last_run.index) <= last[p]) out_of_order.fetch_add(1);
          last[p] = static_cast<std::int64_t>(last_run.index);
          seen[p][last_run.index].fetch_add(1, std::memory_order_relaxed);
          consumed.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (std::uint64_t i = 0; i < per; ++i) q.push([p, i] { last_run = {p, i}; });
      });
    }
  }
  CHECK(consumed.load() == all);
  CHECK(out_of_order.load() == 0);
  std::uint64_t wrong = 0;
  for (auto& v : seen) {
    for (auto& hits : v) wrong += hits.load() != 1 ? 1 : 0;
  }
  CHECK(wrong == 0);
  CHECK(q.size() == 0);
}

TEST_CASE("priority_task_queue: priority order, FIFO among equals, take_all, admission") {
  namespace pf = pools::futures;
  pf::priority_task_queue q;
  std::vector<int> order;
  const int prio[] = {0, 5, -3, 5, 0, 127, -128, 5};
  for (int i = 0; i < 8; ++i) {
    q.push(pf::priority_t{static_cast<std::int8_t>(prio[i])}, [&order, i] { order.push_back(i); });
  }
  CHECK(q.size() == 8);
  task_function out;
  CHECK_FALSE(q.try_pop(out, [] { return false; }));
  for (int k = 0; k < 4; ++k) {
    REQUIRE(q.try_pop(out, always));
    out();
  }
  CHECK(order == std::vector<int>{5, 1, 3, 7});
  auto rest = q.take_all();
  CHECK(q.size() == 0);
  for (auto& t : rest) t();
  CHECK(order == std::vector<int>{5, 1, 3, 7, 0, 4, 2, 6});
}
