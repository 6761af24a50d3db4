// SPDX-License-Identifier: MIT
// pools/coroutines/async_latch.hpp — std::latch for coroutines: count down, await zero.
//
//   async_latch done(3);
//   ... three tasks each call done.count_down() ...
//   co_await done;   // suspends (no worker blocked) until the count reaches zero
//
// A counter in front of an async_event: the count_down that reaches zero sets the event.
#pragma once

#include <pools/coroutines/async_event.hpp>

#include <atomic>
#include <cstddef>
#include <stdexcept>

namespace pools::coroutines {

class async_latch {
 public:
  /// Throws std::invalid_argument for a negative count. A count of 0 starts released.
  explicit async_latch(std::ptrdiff_t count) : count_(count), released_(count == 0) {
    if (count < 0) throw std::invalid_argument("pools::coroutines::async_latch: negative count");
  }
  async_latch(const async_latch&) = delete;
  async_latch& operator=(const async_latch&) = delete;

  /// Decrements by n (> 0, at most the remaining count); releases the waiters on reaching zero.
  void count_down(std::ptrdiff_t n = 1) {
    if (n <= 0) throw std::invalid_argument("pools::coroutines::async_latch::count_down: n must be positive");
    // acq_rel: release publishes this caller's writes; acquire in the caller that reaches zero
    // gathers every earlier count_down's, and the event's release passes them on to the waiters.
    const std::ptrdiff_t before = count_.fetch_sub(n, std::memory_order_acq_rel);
    if (before < n) throw std::logic_error("pools::coroutines::async_latch::count_down below zero");
    if (before == n) released_.set();
  }

  bool try_wait() const noexcept { return released_.is_set(); }

  async_event::awaiter operator co_await() const noexcept { return released_.operator co_await(); }

 private:
  std::atomic<std::ptrdiff_t> count_;
  async_event released_;
};

}  // namespace pools::coroutines
