// pools/fibers/detail/spinlock.hpp — the short lock inside every fiber primitive.
//
// Why not std::mutex: a fiber that decides to wait holds its primitive's lock across the switch
// to another fiber, and the lock is released by the *next* context on the same thread (see
// detail/waiter.hpp, park()). The critical sections are a few dozen instructions, so spinning
// costs less than a futex round trip; after a short spin the waiter yields its thread, which
// matters on a machine with more threads than cores.
#pragma once

#include <atomic>
#include <thread>

namespace pools::fibers::detail {

/// One pause instruction: tells the core this is a spin loop (saves power, frees the sibling
/// hyper-thread, avoids a memory-order mis-speculation penalty when the lock is released).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

class spinlock {
 public:
  void lock() noexcept {
    for (;;) {
      // acquire: everything the previous owner wrote inside the critical section is visible.
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      // Test-and-test-and-set: spin on a plain load so waiting cores share the cache line
      // instead of bouncing it with writes.
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) {
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
  std::atomic<bool> locked_{false};
};

}  // namespace pools::fibers::detail
