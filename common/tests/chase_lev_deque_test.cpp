// SPDX-License-Identifier: MIT
// chase_lev_deque: owner LIFO / thief FIFO, growth that keeps every item, and a concurrent stress
// run in which every item must be taken exactly once. (The memory orders themselves are checked
// by the Relacy model test, common/model/deque_model.cpp.)
#include <doctest/doctest.h>

#include <pools/chase_lev_deque.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using pools::chase_lev_deque;
using pools::steal_status;

namespace {
// POOLS_SANITIZED=1 (set by ctest in sanitizer builds): the stress loop runs smaller.
bool sanitized() {
  const char* v = std::getenv("POOLS_SANITIZED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}
}  // namespace

TEST_CASE("chase_lev_deque: the owner pops newest first, thieves steal oldest first") {
  chase_lev_deque<int> dq(4);
  for (int i = 1; i <= 4; ++i) dq.push(i);
  int v = 0;
  REQUIRE(dq.pop(v));
  CHECK(v == 4);
  auto s = dq.steal();
  REQUIRE(s.status == steal_status::success);
  CHECK(s.value == 1);
  REQUIRE(dq.pop(v));
  CHECK(v == 3);
  REQUIRE(dq.pop(v));
  CHECK(v == 2);
  CHECK_FALSE(dq.pop(v));
  CHECK(dq.steal().status == steal_status::empty);
  CHECK(dq.looks_empty());
}

TEST_CASE("chase_lev_deque: growth keeps every item and retires (does not free) old rings") {
  chase_lev_deque<int> dq(2);
  CHECK(dq.capacity() == 2);
  for (int i = 0; i < 1000; ++i) dq.push(i);
  CHECK(dq.capacity() == 1024);
  CHECK(dq.ring_count() == 10);  // 2, 4, ..., 1024: the old ones stay until the deque dies
  // Interleave steals and pops: every value comes out once.
  std::vector<int> seen(1000, 0);
  int v = 0;
  for (int i = 0; i < 500; ++i) {
    auto s = dq.steal();
    REQUIRE(s.status == steal_status::success);
    ++seen[static_cast<std::size_t>(s.value)];
  }
  while (dq.pop(v)) ++seen[static_cast<std::size_t>(v)];
  for (int i = 0; i < 1000; ++i) CHECK(seen[static_cast<std::size_t>(i)] == 1);
}

TEST_CASE("chase_lev_deque: wrap-around — a ring reused many times without growing") {
  chase_lev_deque<int> dq(8);
  int v = 0;
  for (int round = 0; round < 10'000; ++round) {
    for (int i = 0; i < 6; ++i) dq.push(round * 6 + i);
    auto s = dq.steal();
    REQUIRE(s.status == steal_status::success);
    CHECK(s.value == round * 6);
    for (int i = 5; i >= 1; --i) {
      REQUIRE(dq.pop(v));
      CHECK(v == round * 6 + i);
    }
  }
  CHECK(dq.capacity() == 8);
}

TEST_CASE("chase_lev_deque: concurrent owner and three thieves take every item exactly once") {
  const std::int64_t items = sanitized() ? 200'000 : 2'000'000;
  chase_lev_deque<std::int64_t> dq(2);  // start tiny: growth happens while thieves steal
  std::vector<std::atomic<std::uint8_t>> taken(static_cast<std::size_t>(items));
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> stolen{0};
  std::vector<std::thread> thieves;
  for (int t = 0; t < 3; ++t) {
    thieves.emplace_back([&] {
      for (;;) {
        const bool finished = done.load(std::memory_order_acquire);
        auto r = dq.steal();
        if (r.status == steal_status::success) {
          taken[static_cast<std::size_t>(r.value)].fetch_add(1, std::memory_order_relaxed);
          stolen.fetch_add(1, std::memory_order_relaxed);
        } else if (r.status == steal_status::empty && finished) {
          return;
        }
      }
    });
  }
  // The owner pushes in bursts and pops part of each burst back, like fork/join does.
  std::int64_t next = 0, popped = 0, v = 0;
  while (next < items) {
    const std::int64_t burst = 1 + (next % 7);
    for (std::int64_t k = 0; k < burst && next < items; ++k) dq.push(next++);
    for (std::int64_t k = 0; k < burst / 2; ++k) {
      if (dq.pop(v)) {
        taken[static_cast<std::size_t>(v)].fetch_add(1, std::memory_order_relaxed);
        ++popped;
      }
    }
  }
  while (dq.pop(v)) {
    taken[static_cast<std::size_t>(v)].fetch_add(1, std::memory_order_relaxed);
    ++popped;
  }
  done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  std::int64_t wrong = 0;
  for (auto& t : taken) wrong += t.load(std::memory_order_relaxed) != 1 ? 1 : 0;
  CHECK(wrong == 0);
  CHECK(popped + stolen.load() == items);
  INFO("stolen " << stolen.load() << " of " << items);
}
