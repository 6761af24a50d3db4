// SPDX-License-Identifier: MIT
// pools/coroutines/detail/resumer.hpp — how a synchronisation primitive wakes a waiting coroutine.
//
// A waiter remembers the pool it was running on when it suspended (scheduler.hpp). Whoever
// releases it (set(), unlock(), a channel operation) hands it back to that pool with
// scheduler::enqueue — on the tuned thread_pool onto the releaser's own deque when the releaser is
// a worker of that pool, else onto the injection queue; on the textbook_pool onto its one queue —
// rather than resuming it inline: the releaser keeps running, and a release that frees a thousand
// waiters does not run them all nested on one stack. A waiter that suspended outside any pool is
// resumed inline.
//
// capture() also says what the coroutine is about to wait on, and not_suspended() that it did
// not wait after all: the simulator (simulated.hpp) names waiting coroutines in its deadlock
// report. And on the simulator every co_await on a primitive is a scheduling point *before* the
// operation (pools/sim/scheduler.hpp, SCHEDULING POINTS): the primitive's await_ready answers
// false (simulated_here()), and its await_suspend starts with defer(), which hands the rest of
// await_suspend to the simulator as the coroutine's next step. So an uncontended lock is a point
// too: between an unlock() and the next lock() another task may run. The pools do not want to
// know (scheduler::notes_waits() is false): a load and a branch.
#pragma once

#include <pools/coroutines/scheduler.hpp>

#include <coroutine>
#include <utility>

namespace pools::coroutines::detail {

/// True when the caller runs on the simulator: a primitive's await_ready then answers false, so
/// that even an operation that need not wait passes through defer().
inline bool simulated_here() noexcept {
  const scheduler* s = current_scheduler();
  return s != nullptr && s->notes_waits();
}

/// First in a primitive's await_suspend(h): on the simulator, queues `attempt` — the rest of
/// await_suspend, returning whether it suspended h — as h's next step, after a scheduling point
/// before `operation` ("async_mutex lock"), and returns true (h stays suspended until then).
/// Elsewhere returns false: the operation happens now. May throw std::bad_alloc (simulator only),
/// before anything was done.
template <class Attempt>
bool defer(std::coroutine_handle<> h, const char* operation, Attempt&& attempt) {
  scheduler* s = current_scheduler();
  if (s == nullptr || !s->notes_waits()) return false;
  s->defer(h, operation, std::forward<Attempt>(attempt));
  return true;
}

struct resumer {
  std::coroutine_handle<> handle;
  scheduler* pool = nullptr;

  /// Before a primitive may suspend `h` on `object` (a `what`: "async_mutex"); before the waiter
  /// is published, so nothing can have resumed it yet.
  void capture(std::coroutine_handle<> h, const char* what = "a coroutine primitive",
               const void* object = nullptr) noexcept {
    handle = h;
    pool = current_scheduler();
    if (pool != nullptr && pool->notes_waits()) pool->wait_begins(h, what, object);
  }
  /// The primitive did not suspend after all (never published the waiter): `return
  /// resumer_.not_suspended();` from await_suspend. False (go on) on the pools, and on the
  /// simulator after a defer() (the point was before the operation); for a wait that did not go
  /// through defer() the simulator may answer true: it has queued the coroutine as a yield.
  bool not_suspended() const noexcept {
    return pool != nullptr && pool->notes_waits() && pool->wait_cancelled(handle);
  }
  void resume() const {
    if (pool != nullptr) {
      pool->enqueue(handle);
    } else {
      handle.resume();
    }
  }
};

}  // namespace pools::coroutines::detail
