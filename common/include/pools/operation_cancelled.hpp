// SPDX-License-Identifier: MIT
// pools/operation_cancelled.hpp — what a cancelled wait throws, in every variant that cancels.
//
//   try { ch.recv(); } catch (const pools::operation_cancelled&) { ... }       // a fiber
//   try { co_await sleep_for(pool, 10s); } catch (const pools::operation_cancelled&) { ... }
//
// A wait that can be cancelled (docs/cancellation.md lists them, per variant) throws
// operation_cancelled when the stop token its task or fiber runs under is stopped before the
// wait completes. An exception, not an expected-like result, because:
//  * the waits keep their result types (void, bool, std::optional<T>): code written before
//    cancellation existed compiles and behaves as before when no stop is ever requested;
//  * a cancelled task almost always wants to give up as a whole: the exception unwinds it, its
//    destructors run, and it reaches whoever asked for the stop (when_any, with_timeout,
//    when_all) without a check after every wait;
//  * a stop is rare next to the waits that complete: the cost of a throw is paid only then.
// A task that wants to finish something when stopped catches it, as any exception.
//
// pools::coroutines::operation_cancelled and pools::fibers::operation_cancelled name this type.
#pragma once

#include <exception>

namespace pools {

class operation_cancelled : public std::exception {
 public:
  const char* what() const noexcept override {
    return "pools: operation cancelled (the stop token it ran under was stopped)";
  }
};

/// Thrown by with_timeout (coroutines and fibers) when the deadline passed before the work
/// finished: the work was stopped by a timer. A kind of operation_cancelled, so code that
/// handles any cancellation needs one catch.
class timed_out : public operation_cancelled {
 public:
  const char* what() const noexcept override {
    return "pools: with_timeout: the deadline passed before the work finished";
  }
};

}  // namespace pools
