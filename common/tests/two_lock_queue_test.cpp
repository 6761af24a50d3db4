// SPDX-License-Identifier: MIT
// two_lock_queue: order across segment boundaries, admission, batches, take_all, destruction,
// and many producers against many consumers (single pops and batches), each item taken once.
// (The queue's publication inside the futures pool's wake-up protocol is checked by the Relacy
// model common/model/park_futures_model.cpp.)
#include <doctest/doctest.h>

#include <pools/two_lock_queue.hpp>
#include <pools/unique_function.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using pools::task_function;

namespace {
const auto always = [] { return true; };

// POOLS_SANITIZED=1 (set by ctest in sanitizer builds): the stress loops run 10x smaller.
std::uint64_t scaled(std::uint64_t n) {
  const char* v = std::getenv("POOLS_SANITIZED");
  return v != nullptr && std::strcmp(v, "1") == 0 ? n / 10 : n;
}

// After a many-producer, many-consumer run: every item was taken exactly once, each producer's
// items in the order it pushed them, and nothing is left.
using seen_counts = std::vector<std::vector<std::atomic<std::uint8_t>>>;
template <class Queue>
void check_each_taken_once(const Queue& q, std::uint64_t consumed, std::uint64_t all,
                           std::uint64_t out_of_order, const seen_counts& seen) {
  CHECK(consumed == all);
  CHECK(out_of_order == 0);
  std::uint64_t wrong = 0;
  for (const auto& v : seen) {
    for (const auto& hits : v) wrong += hits.load() != 1 ? 1 : 0;
  }
  CHECK(wrong == 0);
  CHECK(q.size() == 0);
}
}  // namespace

TEST_CASE("two_lock_queue: FIFO across many segments, size, empty pops") {
  pools::two_lock_queue<task_function> q;
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

TEST_CASE("two_lock_queue: a refused admission leaves the task queued") {
  pools::two_lock_queue<task_function> q;
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

TEST_CASE("two_lock_queue: take_all and the destructor destroy tasks without running them") {
  auto token = std::make_shared<int>(0);
  {
    pools::two_lock_queue<task_function> q;
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

TEST_CASE("two_lock_queue: 4 producers x 3 consumers, each task once, per-producer order kept") {
  pools::two_lock_queue<task_function> q;
  constexpr int producers = 4, consumers = 3;
  const std::uint64_t per = scaled(200'000);
  const std::uint64_t all = producers * per;
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<int> out_of_order{0};
  seen_counts seen;
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
  check_each_taken_once(q, consumed.load(), all, out_of_order.load(), seen);
}

TEST_CASE("two_lock_queue: batches take the share asked for, in order, across segments") {
  pools::two_lock_queue<std::uintptr_t> q;
  std::uintptr_t out[64];
  CHECK(q.try_pop_batch(out, 64, [](std::size_t) { return std::size_t{1}; }) == 0);
  constexpr std::uintptr_t n = 3000;  // six segments of 511 pointers
  for (std::uintptr_t i = 0; i < n; ++i) q.push(std::uintptr_t{i});
  std::uintptr_t next = 0;
  std::size_t asked_with = 0;
  // share(queued) is asked with the length now; the result is clamped to max.
  std::size_t got = q.try_pop_batch(out, 64, [&](std::size_t queued) {
    asked_with = queued;
    return queued / 2;
  });
  CHECK(asked_with == n);
  REQUIRE(got == 64);
  for (std::size_t i = 0; i < got; ++i) CHECK(out[i] == next++);
  // A share of 0 still takes one item: 0 means "empty" to a caller deciding whether to sleep.
  REQUIRE(q.try_pop_batch(out, 64, [](std::size_t) { return std::size_t{0}; }) == 1);
  CHECK(out[0] == next++);
  CHECK(q.try_pop_batch(out, 0, [](std::size_t queued) { return queued; }) == 0);
  while ((got = q.try_pop_batch(out, 64, [](std::size_t queued) { return 1 + queued / 3; })) != 0) {
    for (std::size_t i = 0; i < got; ++i) REQUIRE(out[i] == next++);
  }
  CHECK(next == n);
  CHECK(q.size() == 0);
}

TEST_CASE("two_lock_queue: 3 producers x 2 batch consumers, each item once, per-producer order kept") {
  pools::two_lock_queue<std::uint64_t> q;
  constexpr std::uint64_t producers = 3, consumers = 2;
  const std::uint64_t per = scaled(300'000);
  const std::uint64_t all = producers * per;
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<int> out_of_order{0};
  seen_counts seen;
  for (std::uint64_t p = 0; p < producers; ++p) seen.emplace_back(per);
  {
    std::vector<std::jthread> threads;
    for (std::uint64_t c = 0; c < consumers; ++c) {
      threads.emplace_back([&] {
        std::vector<std::int64_t> last(producers, -1);
        std::uint64_t batch[32];
        while (consumed.load(std::memory_order_relaxed) < all) {
          const std::size_t n = q.try_pop_batch(batch, 32, [](std::size_t queued) { return 1 + queued / 2; });
          if (n == 0) {
            std::this_thread::yield();
            continue;
          }
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t p = batch[i] / per, index = batch[i] % per;
            if (static_cast<std::int64_t>(index) <= last[p]) out_of_order.fetch_add(1);
            last[p] = static_cast<std::int64_t>(index);
            seen[p][index].fetch_add(1, std::memory_order_relaxed);
          }
          consumed.fetch_add(n, std::memory_order_relaxed);
        }
      });
    }
    for (std::uint64_t p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (std::uint64_t i = 0; i < per; ++i) q.push(p * per + i);
      });
    }
  }
  check_each_taken_once(q, consumed.load(), all, out_of_order.load(), seen);
}
