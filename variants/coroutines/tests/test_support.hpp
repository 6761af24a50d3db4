// SPDX-License-Identifier: MIT
// test_support.hpp — helpers shared by the coroutines variant's tests.
#pragma once

#include <pools/coroutines/task.hpp>
#include <pools/coroutines/when_all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace coro_test {

/// POOLS_SANITIZED=1 (set by ctest in sanitizer builds): stress loops may run smaller.
inline bool sanitized() {
  const char* v = std::getenv("POOLS_SANITIZED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

/// The calling thread's id, read afresh at every call. Across a co_await the coroutine may resume
/// on another thread, but glibc declares pthread_self() (behind std::this_thread::get_id())
/// `const`, so Clang may reuse the id read before the suspension. The empty asm with a memory
/// clobber makes this call one the optimiser must keep.
[[gnu::noinline]] inline std::thread::id thread_now() {
  asm volatile("" ::: "memory");
  return std::this_thread::get_id();
}

/// Waits until `flag` becomes true, at most `limit`; returns whether it did. Used where a test
/// needs another worker to make progress: a bounded wait turns a scheduling bug into a failed
/// CHECK instead of a hang.
inline bool wait_for_flag(const std::atomic<bool>& flag,
                          std::chrono::seconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!flag.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

/// Counts constructions and destructions of itself; a coroutine parameter or local of this type
/// shows when the frame is destroyed, and exactly once.
struct lifetime_probe {
  static inline std::atomic<int> alive{0};
  static inline std::atomic<int> destroyed{0};
  lifetime_probe() { alive.fetch_add(1); }
  lifetime_probe(const lifetime_probe&) { alive.fetch_add(1); }
  lifetime_probe(lifetime_probe&&) noexcept { alive.fetch_add(1); }
  ~lifetime_probe() {
    alive.fetch_sub(1);
    destroyed.fetch_add(1);
  }
  static void reset() {
    alive = 0;
    destroyed = 0;
  }
};

/// fib(n) with one coroutine per call, forked by when_all: runs on any pool.
inline pools::coroutines::task<std::uint64_t> fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  auto [a, b] = co_await pools::coroutines::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

/// A task that returns v.
inline pools::coroutines::task<int> value(int v) {
  co_return v;
}

}  // namespace coro_test
