// SPDX-License-Identifier: MIT
// pools/fibers/condition_variable.hpp — wait for a condition under a pools::fibers::mutex.
//
// Same contract as std::condition_variable (spurious wake-ups allowed, so wait in a loop or use
// the predicate overloads), but waiting suspends the fiber. The waiter is queued *before* the
// user's mutex is released, under the condition variable's own lock, so a notify between the
// unlock and the suspension cannot be lost. Timed waits are served by the pool's timer queue
// (for fibers) or by the thread's own timed wait (for plain threads). Each operation starts with
// a scheduling point of the simulator (detail::sync_point); inside wait the mutex is released
// without one (the condition variable's spinlock is held then), and taken again with one.
//
// Every wait is cancellable: on a fiber whose stop token (this_fiber::get_stop_token()) is stopped
// before a notify reaches it, it throws operation_cancelled — with `lock` held again, as after any
// return, so the caller's lock guard stays right. The re-lock itself is not cancellable.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/spinlock.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace pools::fibers {

class condition_variable {
 public:
  condition_variable() = default;
  condition_variable(const condition_variable&) = delete;
  condition_variable& operator=(const condition_variable&) = delete;

  void notify_one() noexcept {
    detail::sync_point("condition_variable notify_one");
    std::unique_lock guard(guard_);
    detail::waiter* w = waiters_.pop_claimed();
    guard.unlock();
    // wake_one: w's stop callback goes first; the notifier may destroy this condition variable
    // as soon as it returns, before w runs (detail/waiter.hpp).
    if (w != nullptr) detail::wake_one(*w);
  }

  void notify_all() noexcept {
    detail::sync_point("condition_variable notify_all");
    std::unique_lock guard(guard_);
    detail::waiter* list = waiters_.take_all_claimed();
    guard.unlock();
    detail::wake_all(list);
  }

  void wait(std::unique_lock<mutex>& lock) {
    detail::sync_point("condition_variable wait");
    detail::waiter me;
    me.watch_stop(detail::cancellation_point(), guard_, waiters_);  // throws when already stopped
    std::unique_lock guard(guard_);
    if (me.stop_requested()) throw operation_cancelled();  // `lock` is still held
    waiters_.push_back(me);
    mutex& m = release(lock);
    detail::park(me, guard, "condition_variable", this);
    lock = std::unique_lock(m);
    if (me.cancelled) throw operation_cancelled();
  }

  template <class Predicate>
  void wait(std::unique_lock<mutex>& lock, Predicate stop_waiting) {
    while (!stop_waiting()) wait(lock);
  }

  template <class Clock, class Duration>
  std::cv_status wait_until(std::unique_lock<mutex>& lock,
                            const std::chrono::time_point<Clock, Duration>& deadline) {
    detail::sync_point("condition_variable wait_until");
    const auto until = detail::to_steady(deadline);
    const std::stop_token* stop = detail::cancellation_point();  // throws when already stopped
    detail::waiter me(until);  // may throw std::bad_alloc, before `me` is queued or `lock` released
    me.watch_stop(stop, guard_, waiters_);
    std::unique_lock guard(guard_);
    if (me.stop_requested()) throw operation_cancelled();
    waiters_.push_back(me);
    mutex& m = release(lock);
    const bool notified = detail::park_until(me, guard, until, "condition_variable", this);
    if (!notified) {
      std::lock_guard again(guard_);
      waiters_.erase(me);  // still queued unless a notify popped it and lost the claim to the timer
    }
    lock = std::unique_lock(m);
    if (me.cancelled) throw operation_cancelled();  // the stop took it out of the queue
    return notified ? std::cv_status::no_timeout : std::cv_status::timeout;
  }

  template <class Clock, class Duration, class Predicate>
  bool wait_until(std::unique_lock<mutex>& lock, const std::chrono::time_point<Clock, Duration>& deadline,
                  Predicate stop_waiting) {
    while (!stop_waiting()) {
      if (wait_until(lock, deadline) == std::cv_status::timeout) return stop_waiting();
    }
    return true;
  }

  template <class Rep, class Period>
  std::cv_status wait_for(std::unique_lock<mutex>& lock, const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(lock,
                      detail::clock_now() + std::chrono::ceil<std::chrono::steady_clock::duration>(timeout));
  }

  template <class Rep, class Period, class Predicate>
  bool wait_for(std::unique_lock<mutex>& lock, const std::chrono::duration<Rep, Period>& timeout,
                Predicate stop_waiting) {
    return wait_until(lock,
                      detail::clock_now() + std::chrono::ceil<std::chrono::steady_clock::duration>(timeout),
                      std::move(stop_waiting));
  }

 private:
  // Unlocks the caller's mutex without a scheduling point (guard_ is held: the simulated fiber
  // must not switch now) and lets go of it; wait takes it again with a new unique_lock, so that
  // if that throws, `lock` owns nothing.
  static mutex& release(std::unique_lock<mutex>& lock) noexcept {
    mutex& m = *lock.release();
    m.unlock_now();
    return m;
  }

  pools::spinlock guard_;
  detail::wait_queue waiters_;
};

}  // namespace pools::fibers
