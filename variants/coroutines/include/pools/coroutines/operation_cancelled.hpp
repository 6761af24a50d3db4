// SPDX-License-Identifier: MIT
// pools/coroutines/operation_cancelled.hpp — what a cancelled wait throws.
//
//   try { co_await sleep_for(pool, 10s); } catch (const pools::coroutines::operation_cancelled&) { ... }
//
// A wait that can be cancelled (sleep, channel send and receive, async_event, async_mutex lock,
// offload; docs/cancellation.md)
// throws operation_cancelled from its co_await when the stop token its task runs under is stopped
// before the wait completes. An exception, not an expected-like result, because:
//  * the waits keep their result types (void, bool, std::optional<T>): code written before
//    cancellation existed compiles and behaves as before when no stop is ever requested;
//  * a cancelled task almost always wants to give up as a whole: the exception unwinds it, its
//    destructors run, and it reaches whoever asked for the stop (when_any, with_timeout, when_all)
//    without a check after every co_await;
//  * a stop is rare next to the waits that complete: the cost of a throw is paid only then.
// A task that wants to finish something when stopped catches it, as any exception.
#pragma once

#include <exception>

namespace pools::coroutines {

class operation_cancelled : public std::exception {
 public:
  const char* what() const noexcept override {
    return "pools::coroutines: operation cancelled (the task's stop token was stopped)";
  }
};

}  // namespace pools::coroutines
