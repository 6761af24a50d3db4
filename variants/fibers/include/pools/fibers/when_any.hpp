// SPDX-License-Identifier: MIT
// pools/fibers/when_any.hpp — run callables as fibers; the first to finish wins, the others are
// stopped and joined.
//
//   when_any_result<std::string> r = when_any(pool, [&] { return ask(primary); },
//                                                   [&] { return ask(replica); });
//   use(r.index, r.value);   // index: which callable won (0 = primary)
//
// Each callable runs as a fiber of `pool` spawned under a stop token of the when_any's own,
// linked to the caller's (this_fiber::get_stop_token(); a stop from above reaches every racer).
// The first to finish — with a value or with an exception — wins: it requests a stop, so the
// others' cancellable waits (channel, future, condition variable, sleep, offload...) throw
// operation_cancelled. Then when_any joins every racer: no fiber outlives the call, so the
// callables may capture the caller's locals by reference. It returns the winner's index and
// value, or rethrows its exception; what the losers return or throw is dropped.
//
// A loser that never looks at its token runs to its end, and when_any waits for it: a stop is a
// request, not a kill. The election and the stop are the coroutines' when_any's, shared
// (pools/when_any_result.hpp); only the racers differ: fibers here, coroutines there.
//
// Called from a fiber, when_any suspends it in the joins (its worker runs other fibers); from a
// plain thread it blocks the thread.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/when_any_result.hpp>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools::fibers {

using pools::when_any_result;

namespace detail {

template <class R>
using race_slot = std::conditional_t<std::is_void_v<R>, pools::detail::no_value, R>;

// One racer: a fiber under the race's token that runs fn (an lvalue in the caller's frame, which
// outlives the fiber: when_any joins it) and takes part in the election. Never throws.
template <class Pool, class State, class F>
join_handle<void> start_racer(Pool& pool, State& state, F& fn, std::size_t index) {
  return pool.spawn(state.token(), [&state, &fn, index] { state.run(index, fn); });
}

// After the racers have started (or one failed to start: std::bad_alloc): stop the others if
// something went wrong, join every racer, then the winner's result.
template <class R, class State, class Racers>
when_any_result<R> finish_race(State& state, Racers& racers) {
  for (auto& racer : racers)
    if (racer.joinable()) racer.join();  // racers never throw
  return state.template result<R>();
}

}  // namespace detail

/// Runs every callable as a fiber of `pool`, stops the others when the first finishes, joins them
/// all, and returns the first one's index and value (or rethrows its exception). Every callable
/// must return the same type (not a reference).
template <class Pool, class F, class... Rest>
  requires std::is_invocable_v<std::decay_t<F>&> &&
           (std::is_same_v<std::invoke_result_t<std::decay_t<F>&>,
                           std::invoke_result_t<std::decay_t<Rest>&>> &&
            ...)
auto when_any(Pool& pool, F&& first, Rest&&... rest)
    -> when_any_result<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  static_assert(!std::is_reference_v<R>, "when_any: callables returning references are not supported");
  pools::detail::race_state<detail::race_slot<R>> state(detail::current_stop_token());
  std::array<join_handle<void>, 1 + sizeof...(Rest)> racers;  // declared after state: joined first
  std::size_t started = 0;
  try {
    racers[started] = detail::start_racer(pool, state, first, started);
    ++started;
    ((racers[started] = detail::start_racer(pool, state, rest, started), ++started), ...);
  } catch (...) {
    state.stop_others();  // a spawn failed: the started racers are stopped, and joined on the way out
    throw;
  }
  return detail::finish_race<R>(state, racers);
}

/// As above for a vector of callables of one type. Throws std::invalid_argument when it is empty.
template <class Pool, class F>
  requires std::is_invocable_v<F&>
auto when_any(Pool& pool, std::vector<F> fns) -> when_any_result<std::invoke_result_t<F&>> {
  using R = std::invoke_result_t<F&>;
  static_assert(!std::is_reference_v<R>, "when_any: callables returning references are not supported");
  if (fns.empty()) throw std::invalid_argument("pools::fibers::when_any: no callables");
  pools::detail::race_state<detail::race_slot<R>> state(detail::current_stop_token());
  std::vector<join_handle<void>> racers;
  try {
    racers.reserve(fns.size());
    for (std::size_t i = 0; i < fns.size(); ++i)
      racers.push_back(detail::start_racer(pool, state, fns[i], i));
  } catch (...) {
    state.stop_others();
    throw;
  }
  return detail::finish_race<R>(state, racers);
}

}  // namespace pools::fibers
