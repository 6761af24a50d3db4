// frame_allocator: frames are recycled per thread by size class, the cache is bounded, and
// coroutine frames actually come from it.
#include <doctest/doctest.h>

#include <pools/coroutines/frame_allocator.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>

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
  std::thread([] {  // a fresh thread: counters and lists start empty
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
  })
      .join();
}

TEST_CASE("frame_allocator: the per-thread cache is bounded") {
  if constexpr (!fa::enabled) return;
  std::thread([] {
    std::vector<void*> blocks;
    for (std::uint32_t i = 0; i < fa::cache_limit + 100; ++i) blocks.push_back(fa::allocate(64));
    for (void* b : blocks) fa::release(b, 64);  // the last 100 go back to the general allocator
    const auto before = fa::this_thread_stats();
    blocks.clear();
    for (std::uint32_t i = 0; i < fa::cache_limit + 100; ++i) blocks.push_back(fa::allocate(64));
    const auto after = fa::this_thread_stats();
    CHECK(after.cache_hits - before.cache_hits == fa::cache_limit);
    CHECK(after.general_allocs - before.general_allocs == 100);
    for (void* b : blocks) fa::release(b, 64);
  }).join();  // thread exit frees the cached blocks (LeakSanitizer would report otherwise)
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
