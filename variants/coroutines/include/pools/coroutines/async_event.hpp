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
//
// Cancellation (stop_token.hpp): a wait in a task under a stoppable token ends with
// operation_cancelled when the token is stopped first (a set event is not a wait: co_await
// returns at once whatever the token). Such a waiter cannot sit on the lock-free stack, which
// nobody can unlink from early while its frame must go on; it waits on a second list, under a
// mutex that set() takes too. Whoever unlinks it under that mutex resumes it — set() or the stop
// callback — the handshake sleep.hpp draws. Plain waits keep the lock-free path and grow by one
// pointer (the cancellable wait's stop callback lives on the heap).
#pragma once

#include <pools/coroutines/detail/resumer.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/task.hpp>

#include <atomic>
#include <coroutine>
#include <memory>
#include <mutex>
#include <stop_token>

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
    // Once state_ reads "set", *this may be destroyed at any moment: a waiter that arrives then
    // goes on without suspending, and a latch's last waiter often destroys the latch. So all of
    // set()'s work on *this comes first, and the exchange that publishes "set" is its last touch.
    //
    // The cancellable waiters are taken first, under the mutex they queue under. `setting_` tells
    // one arriving after the take not to queue there: it waits on the lock-free list instead,
    // which the exchange below takes (suspend_cancellable).
    awaiter* cancellable = nullptr;
    {
      std::lock_guard lock(cancellable_mutex_);
      setting_ = true;
      cancellable = std::exchange(cancellable_, nullptr);
    }
    // Their stop callbacks go before anyone is resumed: destroying a std::stop_callback waits for
    // an on_stop running on another thread (it finds its waiter gone), so none can still be on
    // its way to this event's mutex once the event may be destroyed. Outside the mutex: that
    // on_stop may be waiting for it.
    for (awaiter* w = cancellable; w != nullptr; w = w->next_) w->cancel_.reset();
    // acq_rel: release publishes the setter's writes to waiters and to later is_set() callers;
    // acquire makes the waiters' list (pushed with release) readable here.
    void* old = state_.exchange(static_cast<void*>(this), std::memory_order_acq_rel);
    // From here on only the waiters are touched; each is alive until it is resumed.
    if (old != this) resume_all(static_cast<awaiter*>(old));
    resume_all(cancellable);
  }

  /// Un-sets a set event (no effect on an unset one or on its waiters).
  void reset() {
    // Under the mutex, so a cancellable waiter sees "not set" and "no set() begun" together.
    std::lock_guard lock(cancellable_mutex_);
    void* expected = this;
    // relaxed: no data is published by reset(); waiters arriving later see "not set".
    if (state_.compare_exchange_strong(expected, nullptr, std::memory_order_relaxed)) setting_ = false;
  }

  class awaiter {
   public:
    explicit awaiter(const async_event& e) noexcept : event_(e) {}
    awaiter(const awaiter&) = delete;  // a stop callback may point at it
    awaiter& operator=(const awaiter&) = delete;
    // On the simulator a set event is waited on too: the wait is a scheduling point
    // (detail/resumer.hpp), deferred by await_suspend to the coroutine's next step.
    bool await_ready() const noexcept { return !detail::simulated_here() && event_.is_set(); }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> h) {
      if (detail::defer(h, "async_event wait", [this, h] { return attempt(h); })) return true;
      return attempt(h);
    }
    /// Throws operation_cancelled when the task's stop token was stopped before the event was set.
    void await_resume() {
      if (cancel_ == nullptr) [[likely]]
        return;
      const bool cancelled = cancel_->cancelled;  // written only by whoever resumed us, before that
      cancel_.reset();                            // waits for a callback still running elsewhere
      if (cancelled) throw operation_cancelled();
    }

   private:
    // await_suspend's work: false when the event is set (go on), true once this waiter is queued.
    template <class Promise>
    bool attempt(std::coroutine_handle<Promise> h) {
      resumer_.capture(h, "async_event", &event_);
      const std::stop_token* token = detail::stop_token_of(h);
      if (token != nullptr && token->stop_possible()) [[unlikely]]
        return suspend_cancellable(*token);
      return push_plain();
    }

    // The lock-free wait: pushed onto the event's stack, resumed only by set().
    bool push_plain() noexcept {
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

    friend class async_event;
    struct on_stop {
      awaiter* self;
      void operator()() const noexcept {
        {
          std::lock_guard lock(self->event_.cancellable_mutex_);
          if (!self->event_.unlink_cancellable(self)) return;  // not queued yet, or set() took it
          self->cancel_->cancelled = true;
        }
        self->resumer_.resume();  // after this, *self may be gone
      }
    };
    struct cancellation {
      cancellation(const std::stop_token& token, awaiter* self) : callback(token, on_stop{self}) {}
      bool cancelled = false;  // declared first: set before the callback can run
      std::stop_callback<on_stop> callback;
    };

    bool suspend_cancellable(const std::stop_token& token) {
      // May run on_stop here, if the token was stopped just now: it finds nothing queued.
      cancel_ = std::make_unique<cancellation>(token, this);
      {
        std::lock_guard lock(event_.cancellable_mutex_);
        if (token.stop_requested()) {
          cancel_->cancelled = true;
          return resumer_.not_suspended();
        }
        if (event_.is_set()) return resumer_.not_suspended();
        if (!event_.setting_) {
          next_ = event_.cancellable_;
          event_.cancellable_ = this;
          return true;
        }
      }
      // A set() has begun and already took the cancellable list, but has not yet published "set";
      // going on now could let this coroutine destroy the event under that set(). Its exchange is
      // moments away, so wait for it as a plain waiter, no longer cancellable: the stop callback
      // goes first (outside the mutex, which a running on_stop may be waiting for).
      cancel_.reset();
      return push_plain();
    }

    const async_event& event_;
    awaiter* next_ = nullptr;
    detail::resumer resumer_;
    std::unique_ptr<cancellation> cancel_;  // only for a wait under a stoppable token
  };

  awaiter operator co_await() const noexcept { return awaiter{*this}; }

 private:
  static void resume_all(awaiter* w) {
    while (w != nullptr) {
      awaiter* next = w->next_;  // read first: once resumed, the waiter's frame may be gone
      w->resumer_.resume();
      w = next;
    }
  }
  // Under cancellable_mutex_: takes `w` off the cancellable list; false if it is not there.
  bool unlink_cancellable(awaiter* w) const noexcept {
    for (awaiter** p = &cancellable_; *p != nullptr; p = &(*p)->next_) {
      if (*p == w) {
        *p = w->next_;
        return true;
      }
    }
    return false;
  }

  // Waiting is logically const (it does not change whether the event is set), hence mutable.
  mutable std::atomic<void*> state_;
  mutable std::mutex cancellable_mutex_;
  mutable awaiter* cancellable_ = nullptr;  // waiters under a stoppable token; under the mutex
  bool setting_ = false;                    // a set() has begun (under the mutex)
};

}  // namespace pools::coroutines
