// SPDX-License-Identifier: MIT
// frame_allocator: frames are recycled per thread by size class, the per-thread lists are bounded
// and overflow into the transfer cache, which hands whole batches to a thread that runs out, and
// coroutine frames actually come from it.
#include <doctest/doctest.h>

#include <pools/coroutines/frame_allocator.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/wait_group.hpp>

#include <thread>
#include <vector>

namespace pc = pools::coroutines;
using fa = pc::frame_allocator;

TEST_CASE("frame_allocator: a released frame is reused for the next frame of its size class") {
  if constexpr (!fa::enabled) {
    MESSAGE("frame cache disabled in this build (AddressSanitizer sees every frame)");
    void* p = fa::allocate(100);
    fa::release(p, 100);
    return;
  }
  // A fresh thread (counters and lists start empty) and an empty transfer cache, so a miss goes
  // to the general allocator instead of taking a batch another test left behind.
  fa::trim_transfer_cache();
  std::thread([] {
    void* a = fa::allocate(100);
    fa::release(a, 100);
    void* b = fa::allocate(120);  // same 128-byte class
    CHECK(b == a);
    void* c = fa::allocate(200);  // another class: not the cached block
    CHECK(c != a);
    fa::release(b, 120);
    fa::release(c, 200);
    const auto s = fa::this_thread_stats();
    CHECK(s.cache_hits == 1);
    CHECK(s.general_allocs == 2);
    // Frames above the largest class bypass the cache.
    void* big = fa::allocate(fa::largest_cached + 1);
    fa::release(big, fa::largest_cached + 1);
    void* big2 = fa::allocate(fa::largest_cached + 1);
    fa::release(big2, fa::largest_cached + 1);
    CHECK(fa::this_thread_stats().cache_hits == 1);
    fa::trim_this_thread();
  }).join();
}

TEST_CASE("frame_allocator: a thread's list is bounded, the overflow goes to the transfer cache") {
  if constexpr (!fa::enabled) return;
  // A size class no other test uses in this process, and an empty transfer cache to start from.
  constexpr std::size_t size = 1000;
  fa::trim_transfer_cache();
  std::thread([] {
    // The list keeps cache_limit frames; the rest are spilled in batches to the transfer cache,
    // which keeps depot_batches of them; the one batch more goes to the general allocator, and
    // 10 frames stay in this thread's spill list (less than a batch).
    const std::uint32_t n = fa::cache_limit + (fa::depot_batches + 1) * fa::batch_size + 10;
    std::vector<void*> blocks;
    for (std::uint32_t i = 0; i < n; ++i) blocks.push_back(fa::allocate(size));
    const auto before = fa::this_thread_stats();
    for (void* b : blocks) fa::release(b, size);
    CHECK(fa::this_thread_stats().batches_given - before.batches_given == fa::depot_batches);
    // Allocating them all again: the list, then the spill, then every batch back from the
    // transfer cache; only the refused batch has to come from the general allocator.
    blocks.clear();
    for (std::uint32_t i = 0; i < n; ++i) blocks.push_back(fa::allocate(size));
    const auto after = fa::this_thread_stats();
    CHECK(after.batches_taken - before.batches_taken == fa::depot_batches);
    CHECK(after.cache_hits - before.cache_hits == n - fa::batch_size);
    CHECK(after.general_allocs - before.general_allocs == fa::batch_size);
    for (void* b : blocks) fa::release(b, size);
  }).join();  // thread exit frees its list and spill list (cache_reaper, src/frame_allocator.cpp)
  fa::trim_transfer_cache();
}

TEST_CASE("frame_allocator: frames one thread frees come back to the thread that allocates") {
  if constexpr (!fa::enabled) return;
  // The pattern of posting from outside a pool: a producer allocates every frame, a consumer
  // frees every one. Without the transfer cache the producer would allocate each from the
  // general allocator, forever.
  constexpr std::size_t size = 900;  // the 960-byte class, unused elsewhere (1000: the 1024-byte)
  fa::trim_transfer_cache();
  constexpr std::uint32_t rounds = 4, per_round = fa::cache_limit + 8 * fa::batch_size;
  std::vector<void*> handed;
  std::uint64_t general_last_round = 0, taken = 0;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    std::thread([&] {  // the producer (the same frames go back and forth between two threads)
      const auto before = fa::this_thread_stats();
      for (std::uint32_t i = 0; i < per_round; ++i) handed.push_back(fa::allocate(size));
      const auto after = fa::this_thread_stats();
      general_last_round = after.general_allocs - before.general_allocs;
      taken += after.batches_taken - before.batches_taken;
      fa::trim_this_thread();
    })
        .join();
    std::thread([&] {  // the consumer: keeps cache_limit, gives 8 batches to the transfer cache
      for (void* b : handed) fa::release(b, size);
      handed.clear();
    })
        .join();
  }
  // Rounds after the first take the 8 batches the consumer gave: 8 * batch_size fewer allocations.
  CHECK(taken == (rounds - 1) * 8);
  CHECK(general_last_round == per_round - 8 * fa::batch_size);
  fa::trim_transfer_cache();
}

TEST_CASE("frame_allocator: posting from outside, workers give batches while the poster takes them") {
  if constexpr (!fa::enabled) return;
  // The same pattern through a pool, with workers giving batches while the poster takes them, so
  // ThreadSanitizer sees both sides of the transfer cache at once (its lock is what orders a
  // batch's links, written by the giving worker, before the poster reads them). Each round posts
  // more frames than the workers' lists hold (2 * cache_limit), so batches are given in every
  // round, and the poster, which only allocates, has an empty list from the second round on.
  pc::thread_pool pool(2);
  std::uint64_t taken = 0;
  std::thread([&] {  // a fresh poster: its own lists start empty
    constexpr std::uint32_t rounds = 4, per_round = 3 * fa::cache_limit;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      pools::wait_group wg(per_round);
      const auto before = fa::this_thread_stats();
      for (std::uint32_t i = 0; i < per_round; ++i) pool.post([&wg] { wg.done(); });
      taken += fa::this_thread_stats().batches_taken - before.batches_taken;
      wg.wait();
    }
  })
      .join();
  CHECK(taken > 0);
}

namespace {
pc::task<int> leaf(int v) {
  co_return v;
}
pc::task<int> many_leaves(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += co_await leaf(1);
  co_return sum;
}
}  // namespace

TEST_CASE("frame_allocator: coroutine frames come from the cache after the first") {
  if constexpr (!fa::enabled) return;
  std::thread([] {
    const auto before = fa::this_thread_stats();
    // Run on this thread directly: a task driven without a pool.
    auto t = many_leaves(1000);
    t.handle().resume();
    REQUIRE(t.is_ready());
    CHECK(t.handle().promise().take_result() == 1000);
    const auto after = fa::this_thread_stats();
    CHECK(after.cache_hits - before.cache_hits >= 999);  // every leaf frame but the first is recycled
  }).join();
}
