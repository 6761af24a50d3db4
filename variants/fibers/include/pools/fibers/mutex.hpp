// SPDX-License-Identifier: MIT
// pools/fibers/mutex.hpp — a mutex whose lock() suspends the fiber, not the thread.
//
// With std::mutex, a fiber that blocks in lock() blocks its whole worker — and if the owner is a
// fiber queued behind it on that worker, never gets it back. This one parks the fiber and lets
// the worker run others. unlock() hands the mutex directly to the longest waiter (FIFO, no
// barging): fair and starvation-free, at the price of a convoy when a lock is hot — keep the
// critical sections short, as always. Works from plain threads too (they block).
// Not recursive; unlocking a mutex the caller does not hold is undefined, as for std::mutex.
// Each operation starts with a scheduling point of the simulator (detail::sync_point).
#pragma once

#include <pools/fibers/detail/waiter.hpp>
#include <pools/spinlock.hpp>

#include <mutex>

namespace pools::fibers {

class mutex {
 public:
  mutex() = default;
  mutex(const mutex&) = delete;
  mutex& operator=(const mutex&) = delete;

  void lock() {
    detail::sync_point("mutex lock");
    std::unique_lock guard(guard_);
    if (!locked_) {
      locked_ = true;
      return;
    }
    detail::waiter me;
    waiters_.push_back(me);
    detail::park(me, guard, "mutex", this);
    // unlock() handed the mutex over: locked_ stayed true on our behalf.
  }

  bool try_lock() noexcept {
    detail::sync_point("mutex try_lock");
    std::lock_guard guard(guard_);
    if (locked_) return false;
    locked_ = true;
    return true;
  }

  void unlock() noexcept {
    detail::sync_point("mutex unlock");
    unlock_now();
  }

 private:
  friend class condition_variable;  // unlocks with unlock_now(): it holds its own spinlock then

  // unlock() without the scheduling point.
  void unlock_now() noexcept {
    std::unique_lock guard(guard_);
    detail::waiter* next = waiters_.pop_claimed();
    if (next == nullptr) locked_ = false;
    guard.unlock();
    if (next != nullptr) detail::wake(*next);
  }

  pools::spinlock guard_;
  bool locked_ = false;  // guarded by guard_
  detail::wait_queue waiters_;
};

}  // namespace pools::fibers
