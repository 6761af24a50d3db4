// SPDX-License-Identifier: MIT
// pools/coroutines/sleep.hpp — suspend a coroutine for a while without holding a worker.
//
//   co_await sleep_for(pool, 10ms);
//   co_await sleep_until(pool, deadline);
//
// The coroutine's handle goes into the pool's timer heap and the worker moves on to other work.
// Workers take due timers when they look for work (and, when busy, every few dozen tasks); a
// parked worker sleeps on its futex with a timeout that ends at the earliest deadline, and adding
// an earlier deadline wakes one. The coroutine resumes on some worker of `pool` at or after the
// deadline (never before). A deadline already passed does not suspend at all.
//
// In a task under a stop token (stop_token.hpp) the sleep is cancellable: a stop resumes the
// coroutine at once, and the co_await throws operation_cancelled. Two parties may then resume
// it — the worker that takes the due timer and the stop callback (on whatever thread called
// request_stop) — and exactly one must. The timer queue's lock decides (timer_queue.hpp):
//
//   await_suspend                        stop callback (any thread)       worker
//   register the stop callback ───┐
//   lock; stopped? no: push; unlock│      lock; cancel(id): found ─► resume (cancelled)
//                                  └──►   lock; cancel(id): gone ──►  nothing   take_due ─► resume
//   (stopped: push nothing; do not suspend, throw)
//
// The callback is registered before the push, so a stop requested at any time is seen: before
// the push by the check under the lock, after it by cancel(). The stop check comes first, before
// the deadline's: a sleep of zero under a stopped token throws too.
#pragma once

#include <pools/coroutines/detail/resumer.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <stop_token>

namespace pools::coroutines {

class sleep_awaiter {
 public:
  sleep_awaiter(thread_pool& pool, std::chrono::steady_clock::time_point deadline) noexcept
      : pool_(&pool), deadline_(deadline) {}
  sleep_awaiter(const sleep_awaiter&) = delete;  // the stop callback points at this awaiter
  sleep_awaiter& operator=(const sleep_awaiter&) = delete;

  bool await_ready() const noexcept { return false; }  // the stop check needs the awaiting task

  template <class Promise>
  bool await_suspend(std::coroutine_handle<Promise> h) {
    const std::stop_token* token = detail::stop_token_of(h);
    if (token == nullptr || !token->stop_possible()) {  // not cancellable: the plain timer
      if (std::chrono::steady_clock::now() >= deadline_) return false;
      pool_->add_timer(deadline_, h);
      return true;
    }
    if (token->stop_requested()) {
      cancelled_ = true;
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline_) return false;
    handle_ = h;
    // May run on_stop here, if the token was stopped just now: it finds no timer yet.
    stop_ = std::make_unique<std::stop_callback<on_stop>>(*token, on_stop{this});
    if (!pool_->add_cancellable_timer(deadline_, h, *token, id_)) {
      cancelled_ = true;  // stopped meanwhile: nothing was queued, nobody else resumes us
      return false;
    }
    return true;  // the last touch of the frame: from here the worker or the callback resumes it
  }

  void await_resume() {
    stop_.reset();  // waits for a callback still running on another thread
    if (cancelled_) throw operation_cancelled();
  }

 private:
  struct on_stop {
    sleep_awaiter* self;
    void operator()() const noexcept {
      if (!self->pool_->cancel_timer(self->id_)) return;  // not queued yet, or the timer fired
      self->cancelled_ = true;
      // Back onto the pool, not resumed here: the stopping thread may be anyone's.
      self->pool_->enqueue(self->handle_);  // after this, *self may be gone
    }
  };

  thread_pool* pool_;
  std::chrono::steady_clock::time_point deadline_;
  std::coroutine_handle<> handle_;
  std::uint64_t id_ = ~std::uint64_t{0};  // written and read under the timer queue's lock
  bool cancelled_ = false;
  // On the heap: a std::stop_callback is ~7 words, and only a wait under a stoppable token has
  // one; every other waiting frame pays one pointer.
  std::unique_ptr<std::stop_callback<on_stop>> stop_;
};

/// Resumes the awaiting coroutine on a worker of `pool` at or after `deadline`.
template <class Duration>
sleep_awaiter sleep_until(thread_pool& pool,
                          std::chrono::time_point<std::chrono::steady_clock, Duration> deadline) {
  return {pool, std::chrono::ceil<std::chrono::steady_clock::duration>(deadline)};
}

/// Resumes the awaiting coroutine on a worker of `pool` after at least `delay`.
template <class Rep, class Period>
sleep_awaiter sleep_for(thread_pool& pool, std::chrono::duration<Rep, Period> delay) {
  return {pool,
          std::chrono::steady_clock::now() + std::chrono::ceil<std::chrono::steady_clock::duration>(delay)};
}

}  // namespace pools::coroutines
