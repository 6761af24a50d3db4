// SPDX-License-Identifier: MIT
// pools/fibers/offload.hpp — run a blocking call on another pool; the fiber waits without holding
// its worker.
//
//   pools::futures::thread_pool blocking(16);     // threads = blocking calls in flight at once
//   std::string lookup(int key) {                 // on a fiber
//     return pools::fibers::offload(blocking, [key] { return legacy_lookup(key); });
//   }
//
// offload(pool, fn) posts fn to `pool` (any pools::Executor; meant for a pools::futures::thread_pool
// sized for the blocking calls) and parks the calling fiber, not its worker thread: the worker runs
// other fibers meanwhile. When fn returns, the blocking thread wakes the fiber, which resumes on a
// worker of its own pool, and offload returns fn's value or rethrows what fn threw. fn and its
// result live on the fiber's stack: nothing is allocated beyond what posting costs the blocking
// pool. Called from a plain thread, offload blocks the thread.
//
// Stop token (this_fiber::get_stop_token()): the call itself cannot be interrupted from outside, so
// a stop ends offload with operation_cancelled at the first point where that is safe:
//   * stopped before the call: fn is not posted;
//   * stopped while fn waits in the blocking pool's queue: fn is not run;
//   * stopped while fn runs: fn runs to its end (it may read the token: fn(std::stop_token) is
//     called with it, as std::jthread does), and its value or exception is dropped.
// The fiber always waits for the blocking pool to be done with fn (that wait is not cancellable):
// fn and its result are on the fiber's stack, and fn may hold references to the caller's locals.
//
// A blocking pool that destroys fn unrun (a futures pool destroyed while paused, or purge())
// ends offload with offload_dropped instead of leaving the fiber parked forever.
//
// The coroutines' offload (pools/coroutines/offload.hpp) shares the call and its outcomes
// (pools/blocking_call.hpp); only the hand-back differs: a coroutine is resumed, a fiber woken.
//
// Lifetimes: the blocking thread's wake is its last touch of the fiber's pool; declare the
// blocking pool after the fibers pool anyway, so that it is destroyed (its threads joined) first.
#pragma once

#include <pools/blocking_call.hpp>
#include <pools/executor.hpp>
#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/spinlock.hpp>

#include <mutex>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools::fibers {

using pools::offload_dropped;

namespace detail {

/// Where the fiber waits for its call: the job arrives once, when fn has run or been dropped.
/// arrive() claims the waiter under the lock and touches nothing of *this after releasing it, so
/// the fiber may return (and this go) as soon as it sees `done_`.
class offload_rendezvous {
 public:
  void arrive() noexcept {
    std::unique_lock guard(lock_);
    done_ = true;
    waiter* w = waiters_.pop_claimed();
    guard.unlock();
    if (w != nullptr) wake(*w);
  }
  /// Not cancellable: the blocking pool must be done with the call first.
  void wait() {
    std::unique_lock guard(lock_);
    if (done_) return;
    waiter me;
    waiters_.push_back(me);
    park(me, guard, "offload", this);
  }

 private:
  pools::spinlock lock_;
  bool done_ = false;  // guarded by lock_, as is waiters_
  wait_queue waiters_;
};

/// The callable posted to the blocking pool. Move-only; destroyed unrun, it reports `dropped`.
template <class Call>
class offload_job {
 public:
  offload_job(Call* call, offload_rendezvous* done) noexcept : call_(call), done_(done) {}
  offload_job(offload_job&& other) noexcept
      : call_(std::exchange(other.call_, nullptr)), done_(other.done_) {}
  offload_job& operator=(offload_job&&) = delete;
  ~offload_job() {
    if (call_ != nullptr) {
      call_->drop();
      done_->arrive();
    }
  }
  void operator()() {
    std::exchange(call_, nullptr)->run();  // never throws
    done_->arrive();
  }

 private:
  Call* call_;
  offload_rendezvous* done_;
};

}  // namespace detail

/// Runs fn() (or fn(stop_token)) on `pool` and returns its value or rethrows its exception, the
/// calling fiber parked meanwhile. See above for stops (operation_cancelled) and dropped calls
/// (offload_dropped).
template <pools::Executor Pool, class F>
  requires std::is_invocable_v<std::decay_t<F>&> || std::is_invocable_v<std::decay_t<F>&, std::stop_token>
auto offload(Pool& pool, F&& fn) -> pools::detail::blocking_result_t<std::decay_t<F>> {
  using call_type = pools::detail::blocking_call<std::decay_t<F>>;
  const std::stop_token* stop = detail::cancellation_point();  // stopped: throws, fn is not posted
  call_type call(std::forward<F>(fn));
  call.watch(stop);  // the token lives in the fiber's task, which outlives this call
  detail::offload_rendezvous done;
  try {
    pool.post(detail::offload_job<call_type>(&call, &done));
  } catch (...) {
    done.wait();  // the job was destroyed (it arrived) — or, should post throw after queueing it, it runs
    throw;
  }
  done.wait();
  return call.result();
}

}  // namespace pools::fibers
