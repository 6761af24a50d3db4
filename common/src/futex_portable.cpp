// SPDX-License-Identifier: MIT
// pools/futex.hpp with C++20 alone (POOLS_PORTABLE, and every system but Linux): what the kernel
// does for FUTEX_WAIT/FUTEX_WAKE, done with a mutex and a condition variable.
//
// A word has no room for a mutex, so a fixed table of buckets stands in for the kernel's hash
// table of sleepers: the word's address picks a bucket, and unrelated words may share one. That
// is why a wake notifies *all* of the bucket's sleepers: a single notify could reach a thread
// sleeping on another word and be lost for ours. Those woken for nothing see their word unchanged
// (or time out) and sleep again: futex_wait may return spuriously, as its contract says.
#include <pools/futex.hpp>

#include <condition_variable>
#include <cstddef>
#include <iterator>
#include <mutex>

namespace pools {

namespace {

struct bucket {
  std::mutex m;
  std::condition_variable cv;
};

bucket& bucket_of(const std::atomic<std::uint32_t>& word) noexcept {
  static bucket table[64];
  // Skip the low bits: words in one cache line (or one object) would otherwise crowd together.
  return table[(reinterpret_cast<std::uintptr_t>(&word) >> 6) % std::size(table)];
}

}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept {
  bucket& b = bucket_of(word);
  std::unique_lock lock(b.m);
  // relaxed: the mutex orders it. A waker changes the word *before* it takes this mutex; so either
  // that change happened before our lock and this load sees it, or the waker takes the mutex after
  // we have released it inside wait() below, and its notify finds us asleep. (The caller re-reads
  // the word with the order it needs once we return.)
  if (word.load(std::memory_order_relaxed) != expected) return;
  if (timeout.count() < 0) {
    b.cv.wait(lock);
  } else {
    b.cv.wait_for(lock, timeout);  // steady clock, like the Linux futex's CLOCK_MONOTONIC
  }
}

void futex_wake(std::atomic<std::uint32_t>& word, int /*count*/) noexcept {
  bucket& b = bucket_of(word);
  // Pass through the mutex: a waiter that compared before our caller's store is then inside
  // wait() (it released the mutex only there), so the notify below reaches it.
  {
    const std::lock_guard lock(b.m);
  }
  b.cv.notify_all();  // all: the bucket may hold sleepers on other words (see the top)
}

}  // namespace pools
