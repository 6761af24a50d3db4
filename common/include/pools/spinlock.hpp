// SPDX-License-Identifier: MIT
// pools/spinlock.hpp — a test-and-test-and-set spin lock for critical sections of a few stores.
//
// Why not std::mutex: a std::mutex taken by another thread puts the caller to sleep in the
// kernel at once (futex wait) and makes the owner pay a futex wake on unlock: two system calls,
// microseconds, to wait out nanoseconds. This lock spins instead, reading the flag (a shared
// cache line copy) and trying the exchange only when it looks free, so waiting threads do not
// steal the line from the owner. After a few dozen rounds it yields the core on every round: if
// the owner was preempted inside its few instructions, the waiter lets it run instead of burning
// a time slice (which matters on a machine with more threads than cores).
//
// Users: the two ends of pools::two_lock_queue (the futures pool's queue, the coroutine pool's
// injection queue), the futures priority queue, the coroutine frame allocator's transfer cache,
// and every fiber primitive, where a lock must also be releasable by another context on the same
// thread (a std::mutex must be unlocked by its owner; see
// variants/fibers/include/pools/fibers/detail/waiter.hpp, park()).
// Satisfies Lockable: use it with std::lock_guard / std::unique_lock.
#pragma once

#include <pools/cpu_relax.hpp>

#include <atomic>
#include <thread>

namespace pools {

class spinlock {
 public:
  void lock() noexcept {
    unsigned rounds = 0;
    // acquire: everything the previous owner wrote inside the critical section is visible.
    while (locked_.exchange(true, std::memory_order_acquire)) {
      // relaxed: only a hint to retry the exchange, which decides.
      while (locked_.load(std::memory_order_relaxed)) {
        if (++rounds < spin_rounds) {
          cpu_relax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }

  bool try_lock() noexcept {
    // The relaxed load first: a failing try_lock does not take the line from the owner.
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }

  // release: publishes the critical section to the next owner's acquire exchange.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr unsigned spin_rounds = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace pools
