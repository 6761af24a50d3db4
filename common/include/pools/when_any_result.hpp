// SPDX-License-Identifier: MIT
// pools/when_any_result.hpp — what a when_any returns, and the election of its winner; shared by
// the coroutines' when_any (an awaitable of tasks) and the fibers' when_any (a call that spawns
// fibers).
//
// Every racer runs under a stop token of the when_any's own (detail::linked_stop_source, linked to
// the caller's). The first to finish — with a value or with an exception — claims the win (one
// atomic exchange), stores its result and stops the others; the when_any then waits for all of
// them and returns the winner's index and value, or rethrows its exception.
#pragma once

#include <pools/detail/linked_stop_source.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools {

/// Which racer won (its position in the argument list or vector) and its value.
template <class T>
struct when_any_result {
  std::size_t index;
  T value;
};

template <>
struct when_any_result<void> {
  std::size_t index;
};

namespace detail {

struct no_value {};

/// The racers' shared state; T = no_value for racers that return void.
template <class T>
class race_state {
 public:
  explicit race_state(const std::stop_token* parent) : stop_(parent) {}

  /// The token every racer runs under.
  const std::stop_token& token() const noexcept { return stop_.token(); }

  /// True for the first caller only: that racer is the winner and stores its result, then stops
  /// the others. relaxed: the exchange only elects (exchanges of one atomic are totally ordered,
  /// so exactly one caller sees false). The winner's result reaches the when_any through the join
  /// of its racer (an acquire on the racer's completion), as any child's result does.
  bool claim(std::size_t index) noexcept {
    if (decided_.exchange(true, std::memory_order_relaxed)) return false;
    winner_ = index;
    return true;
  }
  void stop_others() noexcept { stop_.request_stop(); }

  /// Runs one racer's callable; never throws (what a loser returns or throws is dropped).
  template <class F>
  void run(std::size_t index, F&& fn) noexcept {
    try {
      if constexpr (std::is_same_v<T, no_value>) {
        std::forward<F>(fn)();
        if (claim(index)) stop_others();
      } else {
        T value = std::forward<F>(fn)();
        if (claim(index)) {
          value_.emplace(std::move(value));
          stop_others();
        }
      }
    } catch (...) {
      if (claim(index)) {
        error_ = std::current_exception();
        stop_others();
      }
    }
  }

  /// After every racer has finished: the winner's index and value, or its exception rethrown.
  template <class R>
  when_any_result<R> result() {
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    if constexpr (std::is_void_v<R>) {
      return when_any_result<void>{winner_};
    } else {
      return when_any_result<R>{winner_, std::move(*value_)};
    }
  }

  std::size_t winner_ = 0;
  std::optional<T> value_;  // T = no_value: never engaged
  std::exception_ptr error_;

 private:
  std::atomic<bool> decided_{false};
  linked_stop_source stop_;
};

}  // namespace detail
}  // namespace pools
