// SPDX-License-Identifier: MIT
// pools/coroutines/async_mutex.hpp — a mutex whose lock() suspends the coroutine, not the thread.
//
//   async_mutex m;
//   {
//     auto guard = co_await m.scoped_lock();   // unlocked when guard goes out of scope
//     ... critical section (may itself co_await) ...
//   }
//
// Lock-free (the cppcoro design). One atomic word holds `not_locked`, `locked_no_waiters`, or the
// head of a LIFO stack of newly arrived waiters. The holder also owns a private FIFO list: on
// unlock() it hands the lock directly to the oldest waiter (no barging: the lock is never free
// while waiters exist), refilling the FIFO by reversing the LIFO stack when it runs dry. The new
// holder is handed back to its pool (detail/resumer.hpp), not run inside unlock().
#pragma once

#include <pools/coroutines/detail/resumer.hpp>

#include <atomic>
#include <cassert>
#include <coroutine>
#include <cstdint>
#include <mutex>
#include <utility>

namespace pools::coroutines {

class async_mutex;

/// Owns a locked async_mutex; unlocks it on destruction.
class [[nodiscard]] async_mutex_lock {
 public:
  explicit async_mutex_lock(async_mutex& m, std::adopt_lock_t) noexcept : mutex_(&m) {}
  async_mutex_lock(async_mutex_lock&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
  async_mutex_lock& operator=(async_mutex_lock&&) = delete;
  async_mutex_lock(const async_mutex_lock&) = delete;
  ~async_mutex_lock();

 private:
  async_mutex* mutex_;
};

class async_mutex {
 public:
  async_mutex() noexcept = default;
  async_mutex(const async_mutex&) = delete;
  async_mutex& operator=(const async_mutex&) = delete;
  ~async_mutex() { assert(state_.load(std::memory_order_relaxed) == not_locked && "destroyed while locked"); }

  /// Takes the lock if it is free; never suspends.
  bool try_lock() noexcept {
    std::uintptr_t expected = not_locked;
    // acquire on success: the previous holder's unlock (release) happens-before our section.
    return state_.compare_exchange_strong(expected, locked_no_waiters, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }

  class lock_awaiter {
   public:
    explicit lock_awaiter(async_mutex& m) noexcept : mutex_(m) {}
    bool await_ready() noexcept { return mutex_.try_lock(); }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
      resumer_.capture(h, "async_mutex", &mutex_);
      // relaxed: the CAS below decides; its orders are the ones that matter.
      std::uintptr_t old = mutex_.state_.load(std::memory_order_relaxed);
      for (;;) {
        if (old == not_locked) {
          // acquire on success: as in try_lock(). We hold the lock and do not suspend.
          if (mutex_.state_.compare_exchange_weak(old, locked_no_waiters, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
            return resumer_.not_suspended();
          }
        } else {
          next_ = reinterpret_cast<lock_awaiter*>(old == locked_no_waiters ? 0 : old);
          // release on success: unlock() (acquire) reads next_ and resumer_ written above.
          if (mutex_.state_.compare_exchange_weak(old, reinterpret_cast<std::uintptr_t>(this),
                                                  std::memory_order_release, std::memory_order_relaxed)) {
            return true;
          }
        }
      }
    }
    void await_resume() const noexcept {}

   protected:
    async_mutex& mutex_;

   private:
    friend class async_mutex;
    lock_awaiter* next_ = nullptr;
    detail::resumer resumer_;
  };

  class scoped_lock_awaiter : public lock_awaiter {
   public:
    using lock_awaiter::lock_awaiter;
    async_mutex_lock await_resume() const noexcept { return async_mutex_lock(mutex_, std::adopt_lock); }
  };

  /// `co_await m.lock()` returns once the lock is held; pair with unlock().
  lock_awaiter lock() noexcept { return lock_awaiter{*this}; }
  /// `auto g = co_await m.scoped_lock()` holds the lock until g is destroyed.
  scoped_lock_awaiter scoped_lock() noexcept { return scoped_lock_awaiter{*this}; }

  /// Releases the lock, or hands it to the oldest waiter. Must be called by the holder.
  void unlock() {
    assert(state_.load(std::memory_order_relaxed) != not_locked && "unlock of an unlocked async_mutex");
    lock_awaiter* head = waiters_;
    if (head == nullptr) {
      std::uintptr_t expected = locked_no_waiters;
      // release: publishes the critical section to the next holder's acquire.
      if (state_.compare_exchange_strong(expected, not_locked, std::memory_order_release,
                                         std::memory_order_relaxed)) {
        return;
      }
      // New waiters arrived. acquire: pairs with their release pushes (next_, resumer_ readable).
      std::uintptr_t stack = state_.exchange(locked_no_waiters, std::memory_order_acquire);
      auto* w = reinterpret_cast<lock_awaiter*>(stack);
      while (w != nullptr) {  // reverse the LIFO stack into FIFO order
        lock_awaiter* next = w->next_;
        w->next_ = head;
        head = w;
        w = next;
      }
    }
    waiters_ = head->next_;
    // The lock passes to `head` without becoming free. The critical section is published to it
    // by the pool's queue (a release push / mutex) between this thread and the one resuming it.
    head->resumer_.resume();
  }

 private:
  friend class lock_awaiter;
  static constexpr std::uintptr_t not_locked = 1;
  static constexpr std::uintptr_t locked_no_waiters = 0;
  std::atomic<std::uintptr_t> state_{not_locked};
  lock_awaiter* waiters_ = nullptr;  // FIFO of waiters; touched only by the lock holder
};

inline async_mutex_lock::~async_mutex_lock() {
  if (mutex_ != nullptr) mutex_->unlock();
}

}  // namespace pools::coroutines
