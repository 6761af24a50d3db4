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
// report, and makes every such operation a point where another task may run first (the
// coroutine is suspended after all, as a yield). The pools do not want to know
// (scheduler::notes_waits() is false): a load and a branch.
#pragma once

#include <pools/coroutines/scheduler.hpp>

#include <coroutine>

namespace pools::coroutines::detail {

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
  /// resumer_.not_suspended();` from await_suspend. False (go on) on the pools; the simulator
  /// may answer true: it has queued the coroutine as a yield.
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
