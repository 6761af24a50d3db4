// SPDX-License-Identifier: MIT
// The futures pool's loops: detach/submit _loop, _blocks, _sequence, and multi_future.
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>
#include <pools/index_blocks.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <semaphore>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

using pools::futures::thread_pool;
using namespace futures_test;

namespace {

// Counts how often each index of [first, last) was visited.
template <class I>
struct visits {
  visits(I first, I last) : first(first), hits(last > first ? static_cast<std::size_t>(last - first) : 0) {}
  void hit(I i) { hits.at(static_cast<std::size_t>(i - first)).fetch_add(1, std::memory_order_relaxed); }
  bool each_once() const {
    return std::all_of(hits.begin(), hits.end(), [](const auto& h) { return h.load() == 1; });
  }
  I first;
  std::vector<std::atomic<int>> hits;
};

template <class A, class B>
void check_every_loop_flavour(thread_pool& pool, A first, B last, std::size_t blocks) {
  using I = std::common_type_t<A, B>;
  const I f = static_cast<I>(first), l = static_cast<I>(last);
  INFO("range [" << static_cast<long long>(f) << ", " << static_cast<long long>(l) << "), blocks " << blocks);
  {
    visits<I> v(f, l);
    pool.detach_loop(first, last, [&](I i) { v.hit(i); }, blocks);
    pool.wait();
    CHECK(v.each_once());
  }
  {
    visits<I> v(f, l);
    pool.submit_loop(first, last, [&](I i) { v.hit(i); }, blocks).get();
    CHECK(v.each_once());
  }
  {
    visits<I> v(f, l);
    pool.detach_blocks(
        first, last,
        [&](I b, I e) {
          for (I i = b; i != e; ++i) v.hit(i);
        },
        blocks);
    pool.wait();
    CHECK(v.each_once());
  }
  {
    visits<I> v(f, l);
    pool.detach_sequence(first, last, [&](I i) { v.hit(i); });
    pool.wait();
    CHECK(v.each_once());
  }
  {
    visits<I> v(f, l);
    auto results = pool.submit_sequence(first, last, [&](I i) {
      v.hit(i);
      return i;
    });
    const auto got = results.get();
    CHECK(v.each_once());
    REQUIRE(got.size() == v.hits.size());
    for (std::size_t k = 0; k < got.size(); ++k) CHECK(got[k] == static_cast<I>(f + static_cast<I>(k)));
  }
}

}  // namespace

TEST_CASE("loops: every index exactly once, for any integer type and edge range") {
  thread_pool pool(3);
  SUBCASE("ordinary") {
    check_every_loop_flavour(pool, 0, 1000, 0);
  }
  SUBCASE("empty") {
    check_every_loop_flavour(pool, 5, 5, 0);
  }
  SUBCASE("reversed does nothing") {
    check_every_loop_flavour(pool, 10, 0, 4);
  }
  SUBCASE("negative bounds") {
    check_every_loop_flavour(pool, -500, 500, 7);
  }
  SUBCASE("more blocks than indices") {
    check_every_loop_flavour(pool, 0, 3, 64);
  }
  SUBCASE("bottom of int") {
    check_every_loop_flavour(pool, INT_MIN, INT_MIN + 300, 3);
  }
  SUBCASE("top of int64") {
    check_every_loop_flavour(pool, INT64_MAX - 300, INT64_MAX, 4);
  }
  SUBCASE("top of uint64") {
    check_every_loop_flavour(pool, UINT64_MAX - 300, UINT64_MAX, 5);
  }
  SUBCASE("unsigned char, the whole type but its last value") {
    check_every_loop_flavour(pool, std::uint8_t{0}, std::uint8_t{255}, 10);
  }
  SUBCASE("mixed index types use their common type") {
    check_every_loop_flavour(pool, short{-3}, 300L, 5);
  }
}

TEST_CASE("blocks: the split is pools::index_blocks' split (so it matches parallel_for)") {
  thread_pool pool(4);
  auto blocks_seen = [&](auto first, auto last, std::size_t blocks) {
    using I = std::common_type_t<decltype(first), decltype(last)>;
    auto r = pool.submit_blocks(first, last, [](I b, I e) { return std::pair<I, I>{b, e}; }, blocks).get();
    return std::vector<std::pair<I, I>>(r.begin(), r.end());
  };
  auto expected = [](auto first, auto last, std::size_t blocks) {
    using I = std::common_type_t<decltype(first), decltype(last)>;
    pools::index_blocks<I> split(static_cast<I>(first), static_cast<I>(last), blocks);
    std::vector<std::pair<I, I>> out;
    for (std::size_t k = 0; k < split.count(); ++k) out.push_back(split[k]);
    return out;
  };
  SUBCASE("remainder spread over the first blocks") {
    const auto got = blocks_seen(0, 10, 4);
    CHECK(got == expected(0, 10, 4));
    CHECK(got == std::vector<std::pair<int, int>>{{0, 3}, {3, 6}, {6, 8}, {8, 10}});
  }
  SUBCASE("default block count is the thread count") {
    CHECK(blocks_seen(0, 100, 0) == expected(0, 100, 4));
    CHECK(blocks_seen(0, 100, 0).size() == 4);
  }
  SUBCASE("never more blocks than indices") {
    CHECK(blocks_seen(0, 3, 50).size() == 3);
  }
  SUBCASE("negative and large") {
    CHECK(blocks_seen(-1000000007LL, 999999999LL, 13) == expected(-1000000007LL, 999999999LL, 13));
  }
  SUBCASE("empty and reversed give no futures") {
    CHECK(blocks_seen(7, 7, 3).empty());
    CHECK(blocks_seen(7, -7, 3).empty());
  }
}

TEST_CASE("loops: one task per block, one task per sequence index") {
  thread_pool pool(4);
  pool.pause();  // nothing runs, so the queue shows how many tasks each call made
  std::atomic<int> calls{0};
  pool.detach_loop(0, 100, [&](int) { calls.fetch_add(1); }, 7);
  CHECK(pool.get_tasks_queued() == 7);
  pool.detach_blocks(0, 100, [&](int, int) { calls.fetch_add(1); });
  CHECK(pool.get_tasks_queued() == 7 + 4);
  pool.detach_sequence(0, 10, [&](int) { calls.fetch_add(1); });
  CHECK(pool.get_tasks_queued() == 7 + 4 + 10);
  auto mf = pool.submit_loop(0, 6, [&](int) { calls.fetch_add(1); }, 2);
  CHECK(mf.size() == 2);
  CHECK(pool.get_tasks_queued() == 23);
  CHECK(mf.ready_count() == 0);
  pool.unpause();
  mf.get();
  CHECK(pool.wait_for(patience));
  CHECK(calls.load() == 100 + 4 + 10 + 6);
}

TEST_CASE("loops: the loop body is stored once and shared, not copied per block") {
  struct counted {
    std::shared_ptr<std::atomic<int>> copies, calls;
    counted(const counted& o) : copies(o.copies), calls(o.calls) { copies->fetch_add(1); }
    counted(counted&&) noexcept = default;
    counted(std::shared_ptr<std::atomic<int>> c, std::shared_ptr<std::atomic<int>> k)
        : copies(std::move(c)), calls(std::move(k)) {}
    void operator()(int, int) const { calls->fetch_add(1); }
  };
  auto copies = std::make_shared<std::atomic<int>>(0);
  auto calls = std::make_shared<std::atomic<int>>(0);
  counted body(copies, calls);
  {
    thread_pool pool(2);
    pool.detach_blocks(0, 1000, body, 50);                   // an lvalue: copied once into the shared storage
    pool.submit_blocks(0, 1000, std::move(body), 50).get();  // an rvalue: moved, never copied
    pool.wait();
  }
  CHECK(calls->load() == 100);
  CHECK(copies->load() == 1);
  CHECK(copies.use_count() == 1);  // every shared copy was destroyed with its last block
}

TEST_CASE("multi_future: get, wait, wait_for, ready_count, valid, exceptions after all ran") {
  thread_pool pool(2);
  SUBCASE("results in block order") {
    auto mf = pool.submit_blocks(0, 100, [](int b, int e) { return e - b; }, 8);
    CHECK(mf.valid());
    const std::vector<int> sizes = mf.get();
    CHECK(sizes == std::vector<int>{13, 13, 13, 13, 12, 12, 12, 12});
    CHECK_FALSE(mf.valid());  // consumed
  }
  SUBCASE("wait_for is false while a block waits, ready_count grows") {
    std::binary_semaphore gate(0);
    std::latch others_done(3);
    auto mf = pool.submit_sequence(0, 4, [&](int i) {
      if (i == 0) {
        gate.acquire();
      } else {
        others_done.count_down();
      }
    });
    others_done.wait();
    CHECK_FALSE(mf.wait_for(10ms));
    CHECK_FALSE(mf.wait_until(std::chrono::steady_clock::now() + 1ms));
    // The three others finished their bodies; their futures become ready right after.
    mf[1].wait();
    mf[2].wait();
    mf[3].wait();
    CHECK(mf.ready_count() == 3);
    gate.release();
    mf.wait();
    CHECK(mf.ready_count() == 4);
    CHECK(mf.wait_for(0ms));
  }
  SUBCASE("get rethrows the first exception, but only after every block ran") {
    std::atomic<int> ran{0};
    std::binary_semaphore gate(0);
    auto mf = pool.submit_sequence(0, 6, [&](int i) {
      if (i == 5) gate.acquire();  // the last block is still running when block 1 has failed
      ran.fetch_add(1);
      if (i == 1) throw std::runtime_error("block 1");
      if (i == 3) throw std::logic_error("block 3");
    });
    mf[1].wait();
    auto getting = std::async(std::launch::async, [&] { mf.get(); });
    CHECK(getting.wait_for(20ms) == std::future_status::timeout);  // still waiting for block 5
    gate.release();
    CHECK_THROWS_WITH_AS(getting.get(), "block 1", std::runtime_error);
    CHECK(ran.load() == 6);
  }
  SUBCASE("a reference-returning block gives reference_wrappers") {
    std::vector<int> storage(4, 0);
    auto mf = pool.submit_sequence(std::size_t{0}, storage.size(),
                                   [&](std::size_t i) -> int& { return storage[i]; });
    auto refs = mf.get();
    for (std::size_t i = 0; i < refs.size(); ++i) refs[i].get() = static_cast<int>(i) + 1;
    CHECK(storage == std::vector<int>{1, 2, 3, 4});
  }
  SUBCASE("multi_future<void> from submit_loop; an empty one") {
    std::atomic<int> n{0};
    auto mf = pool.submit_loop(0, 50, [&](int) { n.fetch_add(1); });
    static_assert(std::is_same_v<decltype(mf), pools::futures::multi_future<void>>);
    mf.get();
    CHECK(n.load() == 50);
    auto none = pool.submit_loop(3, 3, [&](int) {});
    CHECK(none.empty());
    CHECK(none.valid());
    none.get();
  }
}

TEST_CASE("loops: exceptions of detached loops are reported, one per failed block") {
  reported_exceptions reported;
  thread_pool pool(2);
  pool.detach_loop(
      0, 40,
      [](int i) {
        if (i % 10 == 0) throw std::runtime_error("expected: loop body failed");
      },
      4);  // blocks [0,10) [10,20) [20,30) [30,40): each throws at its first index
  pool.wait();
  CHECK(reported.value() == 4);
}
