// SPDX-License-Identifier: MIT
// "No allocation per task": counts the calling thread's calls of operator new while it posts.
// This file replaces the global operator new/delete of the test binary (counting only).
#include <doctest/doctest.h>

#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <cstdlib>
#include <future>
#include <new>

#include "test_support.hpp"

namespace {
thread_local std::size_t allocations_on_this_thread = 0;
}

// GCC 12 inlines these into the standard library's callers and then reports free() on memory
// from operator new as a mismatch; here the two are, by construction, the matching pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t size) {
  ++allocations_on_this_thread;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

using pools::futures::thread_pool;
using namespace futures_test;

TEST_CASE("allocation: posting a small lambda allocates nothing once the queue is warm") {
  thread_pool pool(2);
  std::atomic<int> sink{0};
  auto post_round = [&](int n) {
    for (int i = 0; i < n; ++i)
      pool.detach_task([&sink, i] { sink.fetch_add(i, std::memory_order_relaxed); });
    REQUIRE(pool.wait_for(patience));
  };
  post_round(1000);  // warm-up: the queue's segments are allocated, then recycled
  // The queue keeps at most one spare segment; posting in rounds of at most one segment's worth
  // (127 tasks) never needs a second one.
  const std::size_t before = allocations_on_this_thread;
  for (int round = 0; round < 200; ++round) post_round(100);
  CHECK(allocations_on_this_thread - before == 0);
}

TEST_CASE("allocation: submit_task costs only std::future's own two allocations") {
  thread_pool pool(2);
  for (int i = 0; i < 1000; ++i) (void)pool.submit_task([i] { return i; }).get();  // warm-up
  const std::size_t before = allocations_on_this_thread;
  constexpr int n = 1000;
  for (int i = 0; i < n; ++i) {
    auto f = pool.submit_task([i] { return i; });
    REQUIRE(f.get() == i);
  }
  // The packaged_task's shared state and its result object; the 16-byte packaged_task itself
  // sits in the task's inline buffer (BS::thread_pool adds a shared_ptr and a std::function box).
  CHECK(allocations_on_this_thread - before == 2 * n);
}
