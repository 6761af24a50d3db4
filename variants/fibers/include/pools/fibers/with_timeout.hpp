// SPDX-License-Identifier: MIT
// pools/fibers/with_timeout.hpp — a call with a deadline.
//
//   try {
//     std::string body = with_timeout(pool, 200ms, [&] { return fetch(url); });
//   } catch (const pools::fibers::timed_out&) { ... }   // also an operation_cancelled
//
// The timeout is a stop request on a timer: with_timeout races fn against a fiber that sleeps
// `timeout` on `pool`'s timer queue and then throws timed_out (when_any.hpp). If the sleep ends
// first, fn's stop token is stopped — its cancellable waits throw operation_cancelled — and
// with_timeout throws timed_out once fn has returned (no fiber outlives the call). If fn finishes
// first, its value or exception is delivered and the sleep is cancelled, its timer taken out of the
// pool's queue at once. A stop of the caller's token stops both, and operation_cancelled is thrown.
//
// fn that ignores its token is not cut short: with_timeout then returns when it ends, and still
// throws timed_out if the deadline came first (its result is dropped). On a
// pools::fibers::simulated pool the deadline is on the virtual clock.
#pragma once

#include <pools/fibers/operation_cancelled.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/when_any.hpp>

#include <chrono>
#include <type_traits>
#include <utility>

namespace pools::fibers {

/// Runs fn as a fiber of `pool`; stops it after `timeout` and then throws timed_out.
template <class Pool, class Rep, class Period, class F>
  requires std::is_invocable_v<std::decay_t<F>&>
auto with_timeout(Pool& pool, std::chrono::duration<Rep, Period> timeout, F&& fn)
    -> std::invoke_result_t<std::decay_t<F>&> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  const auto delay = std::chrono::ceil<std::chrono::steady_clock::duration>(timeout);
  // The other racer: never returns; throws timed_out after the delay, or operation_cancelled (a
  // loser, dropped) when fn finished first.
  auto timer = [delay]() -> R {
    this_fiber::sleep_for(delay);
    throw timed_out();
  };
  if constexpr (std::is_void_v<R>) {
    when_any(pool, fn, timer);
  } else {
    return when_any(pool, fn, timer).value;
  }
}

}  // namespace pools::fibers
