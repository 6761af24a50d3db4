// SPDX-License-Identifier: MIT
// pools/coroutines/async_event.hpp — a manual-reset event that coroutines await without blocking.
//
//   async_event ready;
//   co_await ready;     // suspends until set(); returns at once if already set
//   ready.set();        // from any thread: every waiter is handed back to its pool
//
// Lock-free (the cppcoro design): one atomic word is either `this` (set), nullptr (not set, no
// waiters) or the head of an intrusive stack of waiters, which live in the waiting coroutines'
// frames — so a waiting coroutine costs its frame and nothing else (the memory benchmark keeps
// 100,000 coroutines suspended on one event).
#pragma once

#include <pools/coroutines/detail/resumer.hpp>

#include <atomic>
#include <coroutine>

namespace pools::coroutines {

class async_event {
 public:
  explicit async_event(bool initially_set = false) noexcept
      : state_(initially_set ? static_cast<void*>(this) : nullptr) {}
  async_event(const async_event&) = delete;
  async_event& operator=(const async_event&) = delete;

  /// acquire: pairs with set()'s release; what the setter wrote is visible after is_set().
  bool is_set() const noexcept {
    return state_.load(std::memory_order_acquire) == static_cast<const void*>(this);
  }

  /// Sets the event and releases every waiter. Idempotent.
  void set() {
    // acq_rel: release publishes the setter's writes to waiters and to later is_set() callers;
    // acquire makes the waiters' list (pushed with release) readable here.
    void* old = state_.exchange(static_cast<void*>(this), std::memory_order_acq_rel);
    if (old == this) return;
    auto* w = static_cast<awaiter*>(old);
    while (w != nullptr) {
      awaiter* next = w->next_;  // read first: once resumed, the waiter's frame may be gone
      w->resumer_.resume();
      w = next;
    }
  }

  /// Un-sets a set event (no effect on an unset one or on its waiters).
  void reset() noexcept {
    void* expected = this;
    // relaxed: no data is published by reset(); waiters arriving later see "not set".
    state_.compare_exchange_strong(expected, nullptr, std::memory_order_relaxed);
  }

  class awaiter {
   public:
    explicit awaiter(const async_event& e) noexcept : event_(e) {}
    bool await_ready() const noexcept { return event_.is_set(); }
    bool await_suspend(std::coroutine_handle<> h) noexcept {
      resumer_.capture(h, "async_event", &event_);
      // acquire: if we see `this` (set), the setter's writes are visible when we continue.
      void* old = event_.state_.load(std::memory_order_acquire);
      do {
        if (old == static_cast<const void*>(&event_)) return resumer_.not_suspended();  // set meanwhile
        next_ = static_cast<awaiter*>(old);
        // release on success: set() (acquire) then reads next_ and resumer_ written above.
        // acquire on failure: as for the first load.
      } while (!event_.state_.compare_exchange_weak(old, static_cast<void*>(this), std::memory_order_release,
                                                    std::memory_order_acquire));
      return true;
    }
    void await_resume() const noexcept {}

   private:
    friend class async_event;
    const async_event& event_;
    awaiter* next_ = nullptr;
    detail::resumer resumer_;
  };

  awaiter operator co_await() const noexcept { return awaiter{*this}; }

 private:
  // Waiting is logically const (it does not change whether the event is set), hence mutable.
  mutable std::atomic<void*> state_;
};

}  // namespace pools::coroutines
