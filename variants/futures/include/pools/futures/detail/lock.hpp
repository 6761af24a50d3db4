// pools/futures/detail/lock.hpp — the lock of each end of the queue: a spin lock.
//
// The queue's critical sections are a handful of stores. A std::mutex that is taken by another
// thread puts the caller to sleep in the kernel at once (futex wait) and makes the owner pay a
// futex wake on unlock: two system calls, microseconds, to wait out nanoseconds. This lock
// spins instead, reading the flag (a shared cache line copy) and trying the exchange only when
// it looks free ("test and test-and-set"), so waiting threads do not steal the line from the
// owner. After a few dozen rounds it yields the core on every round: if the owner was preempted
// inside its few instructions, the waiter lets it run instead of burning a time slice.
#pragma once

#include <pools/futures/detail/cpu.hpp>

#include <atomic>
#include <thread>

namespace pools::futures::detail {

class spin_lock {
 public:
  void lock() noexcept {
    unsigned rounds = 0;
    while (locked_.exchange(true, std::memory_order_acquire)) {
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
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr unsigned spin_rounds = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace pools::futures::detail
