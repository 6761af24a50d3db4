// SPDX-License-Identifier: MIT
// pools/coroutines/detail/timer_queue.hpp — the sleeping coroutines of one pool, earliest first.
//
// A min-heap under a mutex. Timers are not on the fork/join path, and a heap with a lock is the
// structure a reader can check at a glance. The earliest deadline is mirrored in an atomic so that
// workers can tell "nothing is due" with one relaxed load, without the lock and without reading
// the clock while no timer exists.
#pragma once

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <queue>
#include <vector>

namespace pools::coroutines::detail {

class timer_queue {
 public:
  using clock = std::chrono::steady_clock;
  static constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();

  static std::int64_t to_ns(clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }

  /// Adds a sleeper; true when it is now the earliest (idle workers must shorten their sleep).
  bool add(clock::time_point deadline, std::coroutine_handle<> h) {
    const std::int64_t at = to_ns(deadline);
    std::lock_guard lock(mutex_);
    heap_.push(entry{at, next_sequence_++, h});
    const bool earliest = heap_.top().sequence == next_sequence_ - 1;
    // relaxed: the value is a hint read without the lock; the notification that follows an
    // earliest timer (thread_pool::add_timer) carries the ordering a parked worker needs.
    if (earliest) next_deadline_.store(at, std::memory_order_relaxed);
    return earliest;
  }

  /// Moves up to `max` sleepers whose deadline is <= now into out[0..n), earliest first, and
  /// returns n. Allocates nothing (a worker has no caller to hand std::bad_alloc to); the due
  /// sleepers beyond `max` stay, and next_deadline() still says they are due.
  std::size_t take_due(std::int64_t now, std::coroutine_handle<>* out, std::size_t max) {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    while (n < max && !heap_.empty() && heap_.top().deadline <= now) {
      out[n++] = heap_.top().handle;
      heap_.pop();
    }
    // relaxed: as in add(); written under the lock, so it never goes backwards past a new timer.
    next_deadline_.store(heap_.empty() ? never : heap_.top().deadline, std::memory_order_relaxed);
    return n;
  }

  /// The earliest deadline in steady_clock nanoseconds, or `never`. A hint: may be stale.
  std::int64_t next_deadline() const noexcept { return next_deadline_.load(std::memory_order_relaxed); }

  bool empty() const {
    std::lock_guard lock(mutex_);
    return heap_.empty();
  }

 private:
  struct entry {
    std::int64_t deadline;
    std::uint64_t sequence;  // FIFO among equal deadlines
    std::coroutine_handle<> handle;
    bool operator>(const entry& o) const noexcept {
      return deadline != o.deadline ? deadline > o.deadline : sequence > o.sequence;
    }
  };
  mutable std::mutex mutex_;
  std::priority_queue<entry, std::vector<entry>, std::greater<>> heap_;
  std::uint64_t next_sequence_ = 0;
  std::atomic<std::int64_t> next_deadline_{never};
};

}  // namespace pools::coroutines::detail
