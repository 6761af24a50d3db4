// SPDX-License-Identifier: MIT
// pools/coroutines/scheduler.hpp — what task, when_all, sync_wait and the async primitives need
// from a pool: a way to make a suspended coroutine runnable on it again.
//
// Two pools implement it: the textbook_pool (one shared queue, textbook_pool.hpp) and the tuned
// thread_pool (work stealing, thread_pool.hpp). Code that resumes coroutines — sync_wait's first
// hop onto the pool, when_all forking its children, async_event / async_mutex / channel handing a
// waiter back — talks to this interface, so the same task<T> runs on either pool.
//
// A coroutine does not carry its pool around: it finds it through the thread it runs on. Each
// pool's threads set `detail::tl_scheduler` to their pool when they start; current_scheduler()
// reads it. (The tuned pool's threads also set `detail::tl_worker`, which when_all reads first:
// its own deque is the fork/join fast path and must not pay for a virtual call.)
#pragma once

#include <pools/unique_function.hpp>

#include <coroutine>

namespace pools::coroutines {

class scheduler;

namespace detail {
/// The pool whose thread this is, or nullptr on any other thread. Set by each pool's threads.
inline constinit thread_local scheduler* tl_scheduler = nullptr;
}  // namespace detail

class scheduler {
 public:
  /// Makes the suspended coroutine `h` runnable: one of this pool's threads will resume it once.
  virtual void enqueue(std::coroutine_handle<> h) = 0;

  /// True on a thread of this pool.
  bool on_worker_thread() const noexcept { return detail::tl_scheduler == this; }

  /// Whether this scheduler wants to hear about waits (below): only the simulator
  /// (simulated.hpp), which names each waiting coroutine in its deadlock report.
  bool notes_waits() const noexcept { return notes_waits_; }
  /// A primitive (async_event, async_mutex, channel) is about to suspend `h` on `object`.
  virtual void wait_begins(std::coroutine_handle<> /*h*/, const char* /*what*/,
                           const void* /*object*/) noexcept {}
  /// ... and did not suspend it after all. True: the scheduler has queued `h` (a yield), and the
  /// primitive's await_suspend returns true.
  virtual bool wait_cancelled(std::coroutine_handle<> /*h*/) noexcept { return false; }
  /// A primitive's co_await is a scheduling point (the simulator's, pools/sim/scheduler.hpp): the
  /// suspended `h` does `operation` ("async_mutex lock") later, as its next step — `attempt` is
  /// the rest of the primitive's await_suspend (true: it suspended h; false: resume h now). Only
  /// a scheduler whose notes_waits() is true is asked.
  virtual void defer(std::coroutine_handle<> /*h*/, const char* /*operation*/,
                     pools::unique_function<bool()> /*attempt*/) {}

 protected:
  scheduler() = default;
  ~scheduler() = default;  // pools are not destroyed through this interface
  scheduler(const scheduler&) = default;
  scheduler& operator=(const scheduler&) = default;

  bool notes_waits_ = false;  // set by the simulator alone
};

/// The pool the calling thread belongs to, or nullptr when it belongs to none.
inline scheduler* current_scheduler() noexcept {
  return detail::tl_scheduler;
}

}  // namespace pools::coroutines
