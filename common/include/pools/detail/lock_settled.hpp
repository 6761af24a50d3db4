// SPDX-License-Identifier: MIT
// pools/detail/lock_settled.hpp — take a primitive's lock once a release in progress is over.
//
// A primitive whose release others can see without being woken (a latch at zero, a closed
// channel) must not let them see it while the releaser still touches the primitive: the releaser
// marks the release in progress (`busy`) under the lock, lets the lock go to deregister its
// waiters' stop callbacks (each of which may need the lock), and clears the mark under the lock as
// its last touch. Any thread that might see the release takes the lock through here, and so sees
// it only once the mark is gone, after which it may destroy the primitive. The wait is short:
// the releaser only deregisters callbacks. Used by the coroutines' channel and the fibers' latch,
// wait group and channel (the why, for each: docs/cancellation.md).
#pragma once

#include <mutex>
#include <thread>

namespace pools::detail {

/// Locks `lock`; while `busy` (read under it) is set, lets it go, yields and locks it again.
template <class Lock>
std::unique_lock<Lock> lock_settled(Lock& lock, const bool& busy) {
  std::unique_lock guard(lock);
  while (busy) {
    guard.unlock();
    std::this_thread::yield();
    guard.lock();
  }
  return guard;
}

}  // namespace pools::detail
