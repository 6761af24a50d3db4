// SPDX-License-Identifier: MIT
// pools/coroutines/when_any.hpp — run tasks in parallel; the first to finish wins, the others are
// stopped.
//
//   when_any_result<std::string> r = co_await when_any(ask(primary), ask(replica));
//   use(r.index, r.value);   // index: which task won (0 = primary)
//
// Every task runs under a stop token of the when_any's own (stop_token.hpp), linked to the
// caller's. The first task to finish — with a value or with an exception — wins: it requests a
// stop, so the others' cancellable waits (sleep, channel, event, lock, offload) end with
// operation_cancelled. Then when_any waits for every one of them to finish: no task outlives the
// co_await, so references they hold stay valid. The winner's value is returned, or its exception
// rethrown; what the losers return or throw (usually operation_cancelled) is dropped.
//
// A loser that does not look at its token runs to its end: a stop is a request, not a kill. So a
// when_any is as fast as its first finisher only when the others wait in cancellable waits or
// read their token.
//
// Built from when_all (when_all.hpp): each task is wrapped in a small racer coroutine that never
// throws and that, on finishing, tries to claim the win (one atomic exchange). A stop from
// above (the caller's token) reaches every task through the link, and the first to finish, if
// cancelled, delivers operation_cancelled.
#pragma once

#include <pools/coroutines/detail/linked_stop_source.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/when_any_result.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools::coroutines {

/// What when_any returns: which task won (its position in the argument list or vector) and its
/// value (pools/when_any_result.hpp, shared with the fibers' when_any).
using pools::when_any_result;

namespace detail {

// The election of the winner, its result and the stop of the others: pools/when_any_result.hpp.
template <class T>
using any_state = pools::detail::race_state<T>;
using pools::detail::no_value;

template <class T>
task<void> race(task<T> t, any_state<std::conditional_t<std::is_void_v<T>, no_value, T>>& state,
                std::size_t index) {
  t.handle().promise().set_stop_token(&state.token());
  try {
    if constexpr (std::is_void_v<T>) {
      co_await std::move(t);
      if (state.claim(index)) state.stop_others();
    } else {
      T value = co_await std::move(t);
      if (state.claim(index)) {
        state.value_.emplace(std::move(value));
        state.stop_others();
      }
    }
  } catch (...) {
    if (state.claim(index)) {
      state.error_ = std::current_exception();
      state.stop_others();
    }
  }
}

}  // namespace detail

/// Runs every task of the vector in parallel, stops the others when the first finishes, waits for
/// all of them, and returns the first one's index and value (or rethrows its exception). Throws
/// std::invalid_argument for an empty vector or an empty task. Must be awaited on a pool's worker
/// (as when_all).
template <class T>
task<when_any_result<T>> when_any(std::vector<task<T>> tasks) {
  static_assert(!std::is_reference_v<T>, "when_any: tasks of references are not supported");
  if (tasks.empty()) throw std::invalid_argument("pools::coroutines::when_any: no tasks");
  for (const auto& t : tasks) detail::require_valid(t.valid());
  using stored = std::conditional_t<std::is_void_v<T>, detail::no_value, T>;
  const std::stop_token parent = co_await get_stop_token();
  detail::any_state<stored> state(&parent);
  std::vector<task<void>> racers;
  racers.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i)
    racers.push_back(detail::race(std::move(tasks[i]), state, i));
  co_await when_all(std::move(racers));  // racers never throw: every task has finished here
  co_return state.template result<T>();
}

/// As above for tasks given one by one (of one result type).
template <class T, class... Rest>
  requires(std::is_same_v<T, Rest> && ...)
task<when_any_result<T>> when_any(task<T> first, task<Rest>... rest) {
  std::vector<task<T>> tasks;
  tasks.reserve(1 + sizeof...(Rest));
  tasks.push_back(std::move(first));
  (tasks.push_back(std::move(rest)), ...);
  return when_any(std::move(tasks));
}

}  // namespace pools::coroutines
