// SPDX-License-Identifier: MIT
// common/testing/shared_countdown.hpp — the armed, one-shot countdown that both fault injections
// (fail_alloc.cpp, fail_thread_start.cpp) share between threads: arm(k) makes the k-th tick() from
// now return true, once; failures() counts the ticks that did.
#pragma once

#include <atomic>
#include <cstdint>

namespace pools::testing::detail {

class shared_countdown {
 public:
  // relaxed everywhere: a counter; which thread takes the k-th tick is the race the countdown is
  // about, and nothing is published through it. A test reads the counts after joining.
  void arm(std::uint64_t k) noexcept { left_.store(k, std::memory_order_relaxed); }
  void disarm() noexcept { left_.store(0, std::memory_order_relaxed); }
  std::uint64_t failures() const noexcept { return failures_.load(std::memory_order_relaxed); }

  /// True for the k-th call after arm(k); false when disarmed (0) and for every other call.
  bool tick() noexcept {
    std::uint64_t left = left_.load(std::memory_order_relaxed);
    while (left != 0) {
      if (left_.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) return left == 1 && fail();
    }
    return false;
  }
  /// Counts an injected failure (also for a countdown kept elsewhere, per thread); returns true.
  bool fail() noexcept {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

 private:
  std::atomic<std::uint64_t> left_{0};  // 0 = disarmed
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace pools::testing::detail
