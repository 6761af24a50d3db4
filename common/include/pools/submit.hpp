// SPDX-License-Identifier: MIT
// pools/submit.hpp — submit(ex, f, args...) -> std::future, on any pools::Executor; and
// fulfil(promise, fn), which runs fn into a promise.
//
// The task owns a std::promise, which is move-only: that is why executors take move-only
// callables. If the executor ever destroys the task without running it, the promise's
// destructor stores std::future_error(broken_promise): the caller learns it, nothing hangs.
// Like std::async, f and args are decay-copied and invoked once, as rvalues, so move-only
// arguments work.
#pragma once

#include <pools/executor.hpp>

#include <exception>
#include <functional>
#include <future>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pools {

/// Calls fn() and stores its value, or the exception it threw, in p. Never throws.
template <class R, class F>
void fulfil(std::promise<R>& p, F&& fn) noexcept {
  try {
    if constexpr (std::is_void_v<R>) {
      std::forward<F>(fn)();
      p.set_value();
    } else {
      p.set_value(std::forward<F>(fn)());
    }
  } catch (...) {
    p.set_exception(std::current_exception());
  }
}

/// std::packaged_task as a pair: {the future, a move-only task that runs fn into its promise}.
/// Unlike packaged_task, which calls fn INSIDE std::call_once, the task calls fn outside it, so fn
/// may suspend and end on another thread (a fiber: variants/fibers/textbook_pool.hpp says why).
/// Called with an exception instead, task(e), it stores e and never calls fn: what a pool does
/// when it cannot start the task (a fiber without a stack).
template <class F>
auto promised_task(F&& fn) {
  std::promise<std::invoke_result_t<std::decay_t<F>&>> p;
  auto future = p.get_future();  // first: the promise moves into the task
  return std::pair(std::move(future),
                   [p = std::move(p), fn = std::forward<F>(fn)](std::exception_ptr failed = nullptr) mutable {
                     if (failed) {
                       p.set_exception(std::move(failed));
                     } else {
                       fulfil(p, fn);
                     }
                   });
}

template <Executor E, class F, class... Args>
  requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>
auto submit(E& ex, F&& f, Args&&... args)
    -> std::future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
  auto [future, task] = promised_task(
      [fn = std::forward<F>(f), bound = std::make_tuple(std::forward<Args>(args)...)]() mutable {
        return std::apply(std::move(fn), std::move(bound));
      });
  ex.post(std::move(task));
  return std::move(future);
}

}  // namespace pools
