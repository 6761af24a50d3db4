// SPDX-License-Identifier: MIT
// pools/submit.hpp — submit(ex, f, args...) -> std::future, on any pools::Executor.
//
// The task owns a std::promise, which is move-only: that is why executors take move-only
// callables. If the executor ever destroys the task without running it, the promise's
// destructor stores std::future_error(broken_promise): the caller learns it, nothing hangs.
// Like std::async, f and args are decay-copied and invoked once, as rvalues, so move-only
// arguments work.
#pragma once

#include <pools/executor.hpp>

#include <functional>
#include <future>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pools {

template <Executor E, class F, class... Args>
  requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>...>
auto submit(E& ex, F&& f, Args&&... args)
    -> std::future<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
  using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
  std::promise<R> promise;
  auto future = promise.get_future();
  ex.post([promise = std::move(promise), fn = std::forward<F>(f),
           bound = std::make_tuple(std::forward<Args>(args)...)]() mutable {
    try {
      if constexpr (std::is_void_v<R>) {
        std::apply(std::move(fn), std::move(bound));
        promise.set_value();
      } else {
        promise.set_value(std::apply(std::move(fn), std::move(bound)));
      }
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  });
  return future;
}

}  // namespace pools
