// SPDX-License-Identifier: MIT
// pools/coroutines/offload.hpp — run a blocking call on another pool; the coroutine waits without
// holding its worker.
//
//   pools::futures::thread_pool blocking(16);        // threads = blocking calls in flight at once
//   task<std::string> lookup(int key) {
//     co_return co_await offload(blocking, [key] { return legacy_lookup(key); });
//   }
//
// `co_await offload(pool, fn)` posts fn to `pool` (any pools::Executor; meant for a
// pools::futures::thread_pool sized for the blocking calls) and suspends. When fn returns, the
// coroutine is handed back to the pool it was running on (detail/resumer.hpp) and the co_await
// returns fn's value, or rethrows what fn threw. The coroutine's worker runs other coroutines
// meanwhile; the frame holds fn and its result, so nothing is allocated beyond what posting fn
// costs the blocking pool.
//
// Stop token (stop_token.hpp): the call itself cannot be interrupted from outside, so a stop ends
// the co_await with operation_cancelled at the first point where that is safe:
//   * stopped before the co_await: fn is not posted;
//   * stopped while fn waits in the blocking pool's queue: fn is not run;
//   * stopped while fn runs: fn runs to its end (it may read the token: fn(std::stop_token) is
//     called with it, as std::jthread does), and its value or exception is dropped.
// The coroutine always waits for the blocking pool to be done with fn: fn and its result live in
// the coroutine's frame, which must outlive them.
//
// Lifetimes: the blocking thread hands the coroutine back by posting to the coroutine's pool, and
// that post may still be waking a worker when the coroutine has already finished. Declare the
// blocking pool after the coroutine pool, so that it is destroyed (and its threads joined) first.
//
// A blocking pool that destroys fn unrun (a futures pool destroyed while paused, or purge())
// ends the co_await with offload_dropped instead of leaving the coroutine suspended forever.
//
// Who resumes the coroutine, and when: the blocking thread, once fn is done (or dropped), and
// only after await_suspend has finished with the frame — fn may run and finish on another thread
// before post() even returns. Both sides count their arrival on one atomic; the second to arrive
// goes on:
//
//   await_suspend: post(job) ─ fetch_add ─► 0: suspend (the job resumes us) | 1: go on, no suspend
//   blocking job:  run fn, store result ─ fetch_add ─► 0: leave it to await_suspend | 1: resume
//
// If post() throws (std::bad_alloc), the job it was given is destroyed and counts as the first
// arrival; await_suspend rethrows, and the co_await throws that exception.
#pragma once

#include <pools/blocking_call.hpp>
#include <pools/coroutines/detail/resumer.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/executor.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools::coroutines {

/// The blocking pool destroyed the offloaded call without running it (pools/blocking_call.hpp,
/// shared with the fibers' offload).
using pools::offload_dropped;

template <pools::Executor Pool, class F>
class [[nodiscard]] offload_awaitable {
 public:
  using result_type = typename pools::detail::blocking_call<F>::result_type;

  offload_awaitable(Pool& pool, F fn) : pool_(pool), call_(std::move(fn)) {}
  offload_awaitable(const offload_awaitable&) = delete;  // the posted job points at it
  offload_awaitable& operator=(const offload_awaitable&) = delete;

  bool await_ready() const noexcept { return false; }

  template <class Promise>
  bool await_suspend(std::coroutine_handle<Promise> h) {
    call_.watch(detail::stop_token_of(h));
    if (call_.stopped()) {
      call_.cancel();
      return false;
    }
    resumer_.capture(h, "offload", this);
    pool_.post(job(this));  // may throw: then the job was destroyed, the first arrival
    // acq_rel: acquire, when the job arrived first, makes its result visible here; release pairs
    // with the job's acquire, so that it resumes the coroutine only after this function is done
    // with the frame.
    return arrivals_.fetch_add(1, std::memory_order_acq_rel) == 0;
  }

  /// fn's value, or what fn threw; operation_cancelled or offload_dropped (see above).
  result_type await_resume() { return call_.result(); }

 private:
  // The callable posted to the blocking pool. Move-only; destroyed unrun, it reports `dropped`.
  class job {
   public:
    explicit job(offload_awaitable* self) noexcept : self_(self) {}
    job(job&& other) noexcept : self_(std::exchange(other.self_, nullptr)) {}
    job& operator=(job&&) = delete;
    ~job() {
      if (self_ != nullptr) {
        self_->call_.drop();
        self_->arrive();
      }
    }
    void operator()() {
      offload_awaitable* self = std::exchange(self_, nullptr);
      self->call_.run();  // on the blocking pool's thread; never throws
      self->arrive();
    }

   private:
    offload_awaitable* self_;
  };

  void arrive() noexcept {
    // acq_rel: release publishes the outcome and the result to the side that goes on; acquire,
    // when await_suspend arrived first, orders this thread's resume after its last touch of the
    // frame. Arriving first, this thread touches nothing after the fetch_add: the coroutine may
    // already be running on.
    if (arrivals_.fetch_add(1, std::memory_order_acq_rel) == 1) resumer_.resume();
  }

  Pool& pool_;
  pools::detail::blocking_call<F> call_;  // fn, the awaiting task's token, the outcome and result
  detail::resumer resumer_;
  std::atomic<unsigned> arrivals_{0};
};

/// `co_await offload(pool, fn)`: runs fn() (or fn(stop_token)) on `pool` and returns its value
/// or rethrows its exception, resuming on the awaiting coroutine's pool. See above for stops
/// and dropped calls.
template <pools::Executor Pool, class F>
  requires std::is_invocable_v<std::decay_t<F>&> || std::is_invocable_v<std::decay_t<F>&, std::stop_token>
offload_awaitable<Pool, std::decay_t<F>> offload(Pool& pool, F&& fn) {
  return {pool, std::forward<F>(fn)};
}

}  // namespace pools::coroutines
