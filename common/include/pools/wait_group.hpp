// SPDX-License-Identifier: MIT
// pools/wait_group.hpp — wait for a dynamic number of tasks (Go's sync.WaitGroup).
//
// std::latch has a fixed count; a wait group's count can grow while tasks run (add() before
// posting each task). The waiter blocks its thread: this is for code outside a pool, or for
// executors whose tasks may block. Fiber and coroutine variants have their own suspending
// versions.
//
// Lifetime: the usual pattern is `wait_group wg; ... wg.wait(); }` — the waiter destroys the
// object as soon as wait() returns, possibly while the last done() is still inside the object.
// The counter alone cannot tell the waiter that done() has finished with it, so the last done()
// publishes `released_` under the mutex, and wait() returns only after seeing it under the same
// mutex. The last thing done() touches is the mutex unlock, which POSIX allows to race with the
// mutex's destruction by the thread it unblocked.
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace pools {

class wait_group {
 public:
  explicit wait_group(std::ptrdiff_t count = 0) : count_(count), released_(count == 0) { assert(count >= 0); }
  wait_group(const wait_group&) = delete;
  wait_group& operator=(const wait_group&) = delete;

  /// Adds n to the count. When the count may be zero, call it before wait() can run (as in Go).
  void add(std::ptrdiff_t n = 1) {
    // relaxed: the task this add() announces is published to its worker by post(), which
    // synchronises; only the 0 -> n transition has to re-arm the waiter.
    if (count_.fetch_add(n, std::memory_order_relaxed) == 0) {
      std::lock_guard lock(mutex_);
      released_ = false;
    }
  }

  /// Marks one unit done. The count must be positive.
  void done() {
    // acq_rel: release publishes this task's writes; the acquire half lets the last done()
    // carry every earlier done()'s writes on to the waiter through the mutex below.
    const auto before = count_.fetch_sub(1, std::memory_order_acq_rel);
    assert(before > 0 && "wait_group::done() called more often than add()");
    if (before == 1) {
      std::lock_guard lock(mutex_);
      released_ = true;
      released_cv_.notify_all();
    }
  }

  /// Blocks until the count reaches zero.
  void wait() {
    std::unique_lock lock(mutex_);
    released_cv_.wait(lock, [this] { return released_; });
  }

  /// Blocks until the count reaches zero or `timeout` passes; true when it reached zero.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock lock(mutex_);
    return released_cv_.wait_for(lock, timeout, [this] { return released_; });
  }

  /// The count now: a hint for statistics and tests, not a completion signal. It reaches zero
  /// before the last done() has published the release, so a thread that sees zero here must still
  /// wait() before it may destroy the group (or read what the tasks wrote).
  std::ptrdiff_t count() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::ptrdiff_t> count_;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_;  // guarded by mutex_
};

}  // namespace pools
