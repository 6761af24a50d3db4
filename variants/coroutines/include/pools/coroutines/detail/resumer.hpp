// pools/coroutines/detail/resumer.hpp — how a synchronisation primitive wakes a waiting coroutine.
//
// A waiter remembers the pool it was running on when it suspended. Whoever releases it (set(),
// unlock(), a channel operation) hands it back to that pool — onto the releaser's own deque when
// the releaser is a worker of that pool, else onto the injection queue — rather than resuming it
// inline: the releaser keeps running, and a release that frees a thousand waiters does not run
// them all nested on one stack. A waiter that suspended outside any pool is resumed inline.
#pragma once

#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <coroutine>

namespace pools::coroutines::detail {

struct resumer {
  std::coroutine_handle<> handle;
  thread_pool* pool = nullptr;

  void capture(std::coroutine_handle<> h) noexcept {
    handle = h;
    pool = tl_worker != nullptr ? tl_worker->pool : nullptr;
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
