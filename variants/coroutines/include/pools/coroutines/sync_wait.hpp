// SPDX-License-Identifier: MIT
// pools/coroutines/sync_wait.hpp — the bridge from ordinary code: run a task on a pool, block for it.
//
//   int main() { pools::coroutines::thread_pool pool(4); return sync_wait(pool, run_server()); }
//
// `pool` is any scheduler (scheduler.hpp): the tuned thread_pool or the textbook_pool. The
// calling thread blocks (it is not a worker, so nothing else is held up). The task is started
// through a small root coroutine that first hops onto the pool (scheduler::enqueue) — so every
// part of the task runs on the pool's threads — and, when the task is done, wakes the caller. The
// result is moved out, or the task's exception is rethrown here.
//
// Calling sync_wait on a worker of the same pool throws std::logic_error: the worker would block
// waiting for work that may need that very worker (with one worker, it always would).
#pragma once

#include <pools/coroutines/frame_allocator.hpp>
#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/wait_group.hpp>

#include <coroutine>
#include <exception>
#include <stdexcept>
#include <utility>

namespace pools::coroutines {

namespace detail {

struct sync_root {
  struct promise_type : recycled_frame {
    pools::wait_group* done = nullptr;
    std::exception_ptr
        error;  // from the hop onto the pool (e.g. bad_alloc); the task's own is in its promise
    sync_root get_return_object() noexcept {
      return {std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      // The last touch of the frame: after done() the caller may destroy it.
      void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
        self.promise().done->done();
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };
  std::coroutine_handle<promise_type> handle;
};

// Runs a task to completion without taking its result (sync_wait takes it on the caller's thread).
// Promise: a task<T>'s or a stack_task<T>'s.
template <class Promise>
struct completion_of {
  std::coroutine_handle<Promise> h;
  bool await_ready() const noexcept { return h.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) const noexcept {
    h.promise().set_continuation(awaiting);
    return h;
  }
  void await_resume() const noexcept {}
};

// The hop onto the pool: suspend, and let one of the pool's threads resume us.
struct enqueue_on {
  scheduler& pool;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const { pool.enqueue(h); }
  void await_resume() const noexcept {}
};

template <class Promise>
sync_root make_sync_root(scheduler& pool, std::coroutine_handle<Promise> h) {
  co_await enqueue_on{pool};
  co_await completion_of<Promise>{h};
}

// sync_wait's body for any task type: `h` is the task's (owned by the caller).
template <class Promise>
decltype(auto) run_to_completion(scheduler& pool, std::coroutine_handle<Promise> h) {
  if (pool.on_worker_thread()) {
    throw std::logic_error(
        "pools::coroutines::sync_wait called on a worker of the same pool: it would block the worker the "
        "task may need; co_await the task instead");
  }
  if (!h) throw std::invalid_argument("pools::coroutines::sync_wait: empty task");
  pools::wait_group done(1);
  auto root = make_sync_root<Promise>(pool, h).handle;
  struct destroy_root {
    std::coroutine_handle<sync_root::promise_type> h;
    ~destroy_root() { h.destroy(); }
  } guard{root};
  root.promise().done = &done;
  root.resume();  // runs up to schedule(), which queues it on the pool and returns here
  done.wait();
  if (root.promise().error) std::rethrow_exception(root.promise().error);
  return h.promise().take_result();
}

}  // namespace detail

/// Runs `t` on `pool` and blocks the calling thread until it finishes; returns its result or
/// rethrows its exception. Throws std::logic_error on a worker of `pool`, std::invalid_argument
/// for an empty task.
template <class T>
T sync_wait(scheduler& pool, task<T> t) {
  return detail::run_to_completion(pool, t.handle());
}

/// The same for a stack_task (stack_task.hpp), which is not moved: the temporary `fib(30)` of
/// `sync_wait(pool, fib(30))` lives until sync_wait returns. Made on a thread that is not a
/// worker, its frame is on the heap; its children's frames go on the workers' stacks.
template <class T>
T sync_wait(scheduler& pool, stack_task<T>&& t) {
  return detail::run_to_completion(pool, t.handle());
}

}  // namespace pools::coroutines
