// SPDX-License-Identifier: MIT
// pools/blocking_call.hpp — the part of offload(blocking_pool, fn) that does not depend on how the
// caller waits: the call, the caller's stop token, and what became of the call. The coroutines'
// offload (an awaitable: the coroutine suspends) and the fibers' offload (a call: the fiber parks)
// wrap it in their own hand-back.
//
//   caller:         watch(token); stopped()? cancel() and do not post : post a job that runs run()
//   blocking pool:  run(): stopped while queued? cancelled : call fn, keep its value or exception;
//                   stopped while it ran? cancelled (the value or exception is dropped)
//                   a job destroyed unrun calls drop(): the caller gets offload_dropped
//   caller, after the hand-back: result(): the value, or the exception for the outcome
//
// fn may take a std::stop_token (as std::jthread's function does): it is called with the
// caller's, a cancel hook for a call that can be told to stop.
#pragma once

#include <pools/operation_cancelled.hpp>

#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools {

/// The blocking pool destroyed the offloaded call without running it.
class offload_dropped : public std::runtime_error {
 public:
  offload_dropped()
      : std::runtime_error(
            "pools::offload: the blocking pool destroyed the call unrun (it was paused when destroyed, or "
            "purged)") {}
};

namespace detail {

template <class F>
using blocking_result_t =
    typename std::conditional_t<std::is_invocable_v<F&, std::stop_token>,
                                std::invoke_result<F&, std::stop_token>, std::invoke_result<F&>>::type;

template <class F>
class blocking_call {
 public:
  using result_type = blocking_result_t<F>;
  static_assert(!std::is_reference_v<result_type>,
                "offload: fn must return a value or void, not a reference");

  explicit blocking_call(F fn) : fn_(std::move(fn)) {}

  /// The caller's stop token; it must outlive the call (it lives in the caller's frame or task).
  void watch(const std::stop_token* token) noexcept { token_ = token; }
  bool stopped() const noexcept { return token_ != nullptr && token_->stop_requested(); }

  /// Stopped before the call was posted.
  void cancel() noexcept { outcome_ = outcome::cancelled; }
  /// The blocking pool destroyed the job unrun.
  void drop() noexcept { outcome_ = outcome::dropped; }

  /// On the blocking pool's thread.
  void run() noexcept {
    if (stopped()) {  // stopped while queued: fn is not run
      outcome_ = outcome::cancelled;
      return;
    }
    try {
      if constexpr (std::is_void_v<result_type>) {
        call();
      } else {
        value_.emplace(call());
      }
      outcome_ = outcome::value;
    } catch (...) {
      error_ = std::current_exception();
      outcome_ = outcome::error;
    }
    if (stopped()) outcome_ = outcome::cancelled;  // stopped while running: the result is dropped
  }

  /// On the caller's side, after the hand-back: fn's value, or what the outcome throws.
  result_type result() {
    switch (outcome_) {
      case outcome::cancelled:
        throw operation_cancelled();
      case outcome::dropped:
        throw offload_dropped();
      case outcome::error:
        std::rethrow_exception(std::exchange(error_, nullptr));
      case outcome::value:
        break;
    }
    if constexpr (!std::is_void_v<result_type>) return std::move(*value_);
  }

 private:
  enum class outcome { value, error, cancelled, dropped };

  result_type call() {
    if constexpr (std::is_invocable_v<F&, std::stop_token>) {
      return std::invoke(fn_, token_ != nullptr ? *token_ : std::stop_token{});
    } else {
      return std::invoke(fn_);
    }
  }

  F fn_;
  const std::stop_token* token_ = nullptr;
  outcome outcome_ = outcome::value;
  std::optional<std::conditional_t<std::is_void_v<result_type>, char, result_type>> value_;
  std::exception_ptr error_;
};

}  // namespace detail
}  // namespace pools
