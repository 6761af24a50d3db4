// SPDX-License-Identifier: MIT
// pools/fibers/thread_pool.hpp — N worker threads running stackful fibers, with work stealing.
//
//   pools::fibers::thread_pool pool(4);
//   int r = pool.run([&] {                        // from main(): blocks main until done
//     auto left = pool.spawn([] { return 40; });  // a fiber; may run on any worker
//     int right = 2;
//     return left.join() + right;                 // suspends this fiber only, never the thread
//   });
//   pool.post([] { ... });                        // fire and forget (pools::Executor)
//
// Every spawned or posted callable is a fiber: it may block on the fiber primitives of this
// library (mutex, condition_variable, latch, channel, future, join, sleep, yield) and only that
// fiber waits; its worker goes on with other work and the fiber later resumes on whichever worker
// picks it up. A fiber that never blocks never gets a stack of its own: it runs on the stack of
// the fiber that started it (README, "run until it blocks"). See README.md for the design.
//
// Rules of the road:
//  * Destruction drains: it waits for every spawned and posted fiber, including ones spawned
//    while it waits. A fiber blocked forever (on a channel no one will write) blocks it forever.
//  * Destroying the pool from one of its own fibers is a programming error and aborts.
//  * A fiber may change threads at any suspension point: do not keep a thread_local's address,
//    or a std::mutex, across one (a fiber holding a std::mutex while it waits blocks a worker).
//  * spawn(token, f) and post(token, f) run f under a stop token (this_fiber.hpp): its
//    cancellable waits throw operation_cancelled once the token is stopped.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/stop_scope.hpp>
#include <pools/fibers/detail/task.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/fibers/stack_pool.hpp>
#include <pools/park_hook.hpp>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>
#include <type_traits>
#include <utility>

namespace pools::fibers {

struct pool_options {
  /// Worker threads; 0 means one per hardware thread (pools/thread_count.hpp).
  std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  /// Size and guard page of every fiber stack (stack_pool.hpp explains the defaults).
  stack_options stack{};
  /// Finished fibers each worker keeps for reuse, stack and all; beyond this they end and their
  /// stack goes back to the stack pool.
  std::size_t idle_fibers_per_worker = 16;
  /// Where idle workers wait (pools/park_hook.hpp): nullptr = a condition variable; a server
  /// passes its event loop, which the idle workers then run. Must outlive the pool.
  pools::park_hook* park_hook = nullptr;
};

struct pool_statistics {
  std::size_t fibers_created = 0;  // fibers (stacks) ever started; tasks that never block need none
  std::size_t fibers_alive = 0;    // running, suspended or idle right now
  stack_pool::statistics stacks{};
};

class thread_pool {
 public:
  /// `threads` workers with default options; 0 means one per hardware thread.
  explicit thread_pool(std::size_t threads);
  /// Throws std::invalid_argument for more than 4096 threads or a stack size out of range.
  explicit thread_pool(const pool_options& options);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  /// Starts f() as a fiber. From inside the pool it goes on the calling worker's deque (where
  /// idle workers steal it); from outside, on the shared injection queue.
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto spawn(F&& f) -> join_handle<std::invoke_result_t<std::decay_t<F>>> {
    using R = std::invoke_result_t<std::decay_t<F>>;
    auto* t = new detail::task<std::decay_t<F>, R, true>(*scheduler_, true, std::forward<F>(f));
    submit_or_delete(t);
    return join_handle<R>(t);
  }

  /// spawn(f) under `token`: f and everything it calls read it (this_fiber::get_stop_token()),
  /// and their cancellable waits throw operation_cancelled once it is stopped.
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto spawn(std::stop_token token, F&& f) -> join_handle<std::invoke_result_t<std::decay_t<F>>> {
    return spawn(detail::stop_scope<std::decay_t<F>>{std::move(token), std::forward<F>(f)});
  }

  /// pools::Executor: runs f() once as a detached fiber; an exception goes to
  /// pools::report_unhandled_exception.
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  void post(F&& f) {
    submit_or_delete(new detail::task<std::decay_t<F>, void, false>(*scheduler_, false, std::forward<F>(f)));
  }

  /// post(f) under `token`, as spawn(token, f).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  void post(std::stop_token token, F&& f) {
    post(detail::stop_scope<std::decay_t<F>>{std::move(token), std::forward<F>(f)});
  }

  /// Runs f() as a fiber of this pool and returns its result (or rethrows). From a plain thread
  /// this blocks the thread; from a fiber it suspends the fiber (and runs f inline when it can).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto run(F&& f) -> std::invoke_result_t<std::decay_t<F>> {
    return spawn(std::forward<F>(f)).join();
  }

  /// The number of worker threads: the most fibers that run at the same time.
  std::size_t concurrency() const noexcept;

  pool_statistics stats() const;

 private:
  void submit_or_delete(detail::task_base* t);
  std::unique_ptr<detail::scheduler> scheduler_;
};

}  // namespace pools::fibers
