// SPDX-License-Identifier: MIT
// pools/coroutines/detail/timer_queue.hpp — the sleeping coroutines of one pool, earliest first.
//
// A min-heap under a mutex. Timers are not on the fork/join path, and a heap with a lock is the
// structure a reader can check at a glance. The earliest deadline is mirrored in an atomic so that
// workers can tell "nothing is due" with one relaxed load, without the lock and without reading
// the clock while no timer exists.
//
// A sleep under a stop token (sleep.hpp) is cancellable: add_cancellable() gives it an id, and
// cancel(id) takes it back. Exactly one of take_due() and cancel() gets a cancellable sleeper, and
// whoever gets it resumes it: the mutex is the handshake. A cancelled entry is not dug out of the
// heap (that is a linear search); it is marked in `cancellable_` and dropped unrun when it comes
// to the top. Its memory (one entry) goes then; the coroutine goes on at once.
#pragma once

#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <queue>
#include <stop_token>
#include <unordered_map>
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

  enum class added { no, yes, earliest };
  /// A cancellable sleeper: not added (`no`) when `stop` is already stopped, checked under the
  /// lock that cancel() takes; else its id goes into `id` (under the lock too: the stop callback
  /// reads it in cancel()) and the result says whether it is now the earliest.
  added add_cancellable(clock::time_point deadline, std::coroutine_handle<> h, const std::stop_token& stop,
                        std::uint64_t& id) {
    const std::int64_t at = to_ns(deadline);
    std::lock_guard lock(mutex_);
    if (stop.stop_requested()) return added::no;
    const std::uint64_t sequence = next_sequence_;
    cancellable_.emplace(sequence, false);  // may throw std::bad_alloc: then nothing was added
    try {
      heap_.push(entry{at, sequence, h});
    } catch (...) {
      cancellable_.erase(sequence);
      throw;
    }
    ++next_sequence_;
    id = sequence;
    const bool earliest = heap_.top().sequence == sequence;
    // relaxed: as in add().
    if (earliest) next_deadline_.store(at, std::memory_order_relaxed);
    return earliest ? added::earliest : added::yes;
  }

  /// Takes back the cancellable sleeper `id` (read under the lock): true when it was still
  /// waiting — the caller now resumes it, and take_due() never will; false when take_due() has
  /// taken it (its worker resumes it), or it was never added. Allocates nothing (a stop callback
  /// is noexcept).
  bool cancel(const std::uint64_t& id) noexcept {
    std::lock_guard lock(mutex_);
    const auto it = cancellable_.find(id);
    if (it == cancellable_.end() || it->second) return false;
    it->second = true;
    return true;
  }

  /// Moves up to `max` sleepers whose deadline is <= now into out[0..n), earliest first, and
  /// returns n. Allocates nothing (a worker has no caller to hand std::bad_alloc to); the due
  /// sleepers beyond `max` stay, and next_deadline() still says they are due.
  std::size_t take_due(std::int64_t now, std::coroutine_handle<>* out, std::size_t max) {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    while (n < max && !heap_.empty() && heap_.top().deadline <= now) {
      const entry top = heap_.top();
      heap_.pop();
      if (!cancellable_.empty()) {  // a plain sleep is never in it: no lookup while none is pending
        const auto it = cancellable_.find(top.sequence);
        if (it != cancellable_.end()) {
          const bool cancelled = it->second;
          cancellable_.erase(it);
          if (cancelled) continue;  // cancel() got it: its canceller has resumed it
        }
      }
      out[n++] = top.handle;
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
  // The cancellable entries in heap_, by sequence: true once cancel() took it back.
  std::unordered_map<std::uint64_t, bool> cancellable_;
  std::atomic<std::int64_t> next_deadline_{never};
};

}  // namespace pools::coroutines::detail
