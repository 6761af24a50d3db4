// SPDX-License-Identifier: MIT
// pools/coroutines/with_timeout.hpp — a task with a deadline.
//
//   try {
//     std::string body = co_await with_timeout(pool, 200ms, fetch(url));
//     std::string same = co_await with_timeout(200ms, fetch(url));   // the timer on the current pool
//   } catch (const pools::coroutines::timed_out&) { ... }   // also an operation_cancelled
//
// The timeout is a stop request on a timer: with_timeout races the task against a sleep on
// `pool` (when_any.hpp). If the sleep ends first, the task's stop token is stopped — its
// cancellable waits end with operation_cancelled — and with_timeout throws timed_out once the
// task has finished (no task outlives the co_await). If the task finishes first, its value or
// exception is delivered and the sleep is cancelled, taking its timer out of the pool's queue. A
// stop requested from above stops both, and operation_cancelled is thrown.
//
// A task that ignores its token is not cut short: with_timeout then returns when it ends, and
// still throws timed_out if the deadline came first (its result is dropped).
#pragma once

#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_any.hpp>

#include <chrono>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace pools::coroutines {

/// Thrown by with_timeout when the deadline passed before the task finished: an
/// operation_cancelled (pools/operation_cancelled.hpp, shared with the fibers' with_timeout).
using pools::timed_out;

namespace detail {
// The other racer of with_timeout: never returns a value; throws timed_out after `delay`, or
// operation_cancelled (a loser, dropped) when the task finished first.
template <class T>
task<T> fail_after(thread_pool& pool, std::chrono::steady_clock::duration delay) {
  co_await sleep_for(pool, delay);
  throw timed_out();
}
}  // namespace detail

/// Runs `t`; stops it after `timeout` (on `pool`'s timers) and then throws timed_out. Must be
/// awaited on a worker of `pool`'s kind of pool (as when_all).
template <class T, class Rep, class Period>
task<T> with_timeout(thread_pool& pool, std::chrono::duration<Rep, Period> timeout, task<T> t) {
  auto delay = std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  [[maybe_unused]] auto result = co_await when_any(std::move(t), detail::fail_after<T>(pool, delay));
  if constexpr (std::is_void_v<T>) {
    co_return;
  } else {
    co_return std::move(result.value);
  }
}

/// As above, with the timer on the thread_pool the awaiting coroutine runs on. Throws
/// std::logic_error on any other thread (a textbook_pool's has no timers): pass the pool then.
template <class T, class Rep, class Period>
task<T> with_timeout(std::chrono::duration<Rep, Period> timeout, task<T> t) {
  detail::worker* w = detail::tl_worker;  // read where this coroutine runs: on its awaiter's thread
  if (w == nullptr) {
    throw std::logic_error(
        "pools::coroutines::with_timeout(duration, task) must be awaited on a worker of a "
        "pools::coroutines::thread_pool, whose timers run the timeout; elsewhere pass the pool: "
        "with_timeout(pool, duration, task)");
  }
  if constexpr (std::is_void_v<T>) {
    co_await with_timeout(*w->pool, timeout, std::move(t));
  } else {
    co_return co_await with_timeout(*w->pool, timeout, std::move(t));
  }
}

}  // namespace pools::coroutines
