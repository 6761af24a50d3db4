// SPDX-License-Identifier: MIT
// pools/fibers/wait_group.hpp — Go's sync.WaitGroup for fibers: a latch whose count can grow.
//
// add() before starting each piece of work, done() when it finishes, wait() suspends until the
// count is zero. Unlike a latch it can be reused: once zero, add() re-arms it. The lifetime
// argument is the latch's (latch.hpp): wait() checks under the lock, and the last done() makes
// zero visible only once it is done with the group.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/spinlock.hpp>

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>

namespace pools::fibers {

class wait_group {
 public:
  explicit wait_group(std::ptrdiff_t count = 0) : count_(count) {
    if (count < 0)
      throw std::invalid_argument("pools::fibers::wait_group: negative count " + std::to_string(count));
  }
  wait_group(const wait_group&) = delete;
  wait_group& operator=(const wait_group&) = delete;

  /// Adds n (>= 0) to the count.
  void add(std::ptrdiff_t n = 1) {
    if (n < 0) throw std::invalid_argument("pools::fibers::wait_group::add: negative " + std::to_string(n));
    detail::sync_point("wait_group add");
    const auto guard = detail::lock_settled(guard_, releasing_);
    count_ += n;
  }

  /// Marks one unit done. Throws std::logic_error when the count is already zero.
  void done() {
    detail::sync_point("wait_group done");
    auto guard = detail::lock_settled(guard_, releasing_);
    if (count_ == 0) {
      guard.unlock();
      throw std::logic_error("pools::fibers::wait_group::done() called more often than add()");
    }
    if (--count_ != 0) return;
    detail::release_all(guard, releasing_, waiters_.take_all_claimed());
  }

  /// Cancellable, as latch::wait: throws operation_cancelled when the fiber's stop token is
  /// stopped before the count reaches zero.
  void wait() {
    detail::sync_point("wait_group wait");
    if (left() == 0) return;  // not count(): one scheduling point per operation
    detail::waiter me;
    me.watch_stop(detail::cancellation_point(), guard_, waiters_);  // throws when already stopped
    auto guard = detail::lock_settled(guard_, releasing_);
    if (count_ == 0) return;
    if (me.stop_requested()) throw operation_cancelled();
    waiters_.push_back(me);
    detail::park(me, guard, "wait_group", this);
    if (me.cancelled) throw operation_cancelled();
  }

  std::ptrdiff_t count() const noexcept {
    detail::sync_point("wait_group count");
    return left();
  }

 private:
  std::ptrdiff_t left() const noexcept {
    const auto guard = detail::lock_settled(guard_, releasing_);
    return count_;
  }

  mutable pools::spinlock guard_;
  std::ptrdiff_t count_;    // guarded by guard_, as are the two below
  bool releasing_ = false;  // the last done() is not done with the group yet (release_all)
  detail::wait_queue waiters_;
};

}  // namespace pools::fibers
