// SPDX-License-Identifier: MIT
// pools/fibers/latch.hpp — std::latch for fibers: count down to zero once, wait for zero.
//
// Every operation takes the internal lock, including the "already zero?" check in wait(). That
// is what makes the usual pattern safe: `latch l(n); ...; l.wait(); }` destroys the latch as
// soon as wait() returns, possibly while the last count_down() is still in progress. Here the
// last count_down() makes zero visible only once it is done with the latch (detail::release_all:
// the waiters' stop callbacks are deregistered first) and touches only the waiters afterwards, so
// a thread that sees zero (under the lock, taken through lock_settled) can never outrun it.
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

class latch {
 public:
  /// Throws std::invalid_argument when expected < 0.
  explicit latch(std::ptrdiff_t expected) : count_(expected) {
    if (expected < 0)
      throw std::invalid_argument("pools::fibers::latch: negative count " + std::to_string(expected));
  }
  latch(const latch&) = delete;
  latch& operator=(const latch&) = delete;

  /// Throws std::invalid_argument when n < 0 or n exceeds the remaining count.
  void count_down(std::ptrdiff_t n = 1) {
    detail::sync_point("latch count_down");
    auto guard = detail::lock_settled(guard_, releasing_);
    if (n < 0 || n > count_) {
      const auto left = count_;
      guard.unlock();
      throw std::invalid_argument("pools::fibers::latch::count_down(" + std::to_string(n) + ") with " +
                                  std::to_string(left) + " left");
    }
    count_ -= n;
    if (count_ != 0 || n == 0) return;
    detail::release_all(guard, releasing_, waiters_.take_all_claimed());
  }

  bool try_wait() const noexcept {
    detail::sync_point("latch try_wait");
    return reached_zero();
  }

  /// Cancellable (this_fiber::get_stop_token()): throws operation_cancelled when the fiber's
  /// token is stopped before the count reaches zero (a zero count returns at once).
  void wait() const {
    detail::sync_point("latch wait");
    if (reached_zero()) return;  // not try_wait(): one scheduling point per operation
    detail::waiter me;
    me.watch_stop(detail::cancellation_point(), guard_, waiters_);  // throws when already stopped
    auto guard = detail::lock_settled(guard_, releasing_);
    if (count_ == 0) return;
    if (me.stop_requested()) throw operation_cancelled();
    waiters_.push_back(me);
    detail::park(me, guard, "latch", this);
    if (me.cancelled) throw operation_cancelled();
  }

  void arrive_and_wait(std::ptrdiff_t n = 1) {
    count_down(n);
    wait();
  }

 private:
  bool reached_zero() const noexcept {
    const auto guard = detail::lock_settled(guard_, releasing_);
    return count_ == 0;
  }

  mutable pools::spinlock guard_;
  std::ptrdiff_t count_;    // guarded by guard_, as are the two below
  bool releasing_ = false;  // the last count_down is not done with the latch yet (release_all)
  mutable detail::wait_queue waiters_;
};

}  // namespace pools::fibers
