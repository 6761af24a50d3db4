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
#pragma once

#include <pools/coroutines/scheduler.hpp>

#include <coroutine>

namespace pools::coroutines::detail {

struct resumer {
  std::coroutine_handle<> handle;
  scheduler* pool = nullptr;

  void capture(std::coroutine_handle<> h) noexcept {
    handle = h;
    pool = current_scheduler();
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
