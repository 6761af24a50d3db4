// SPDX-License-Identifier: MIT
// pools/reactor/timer.hpp — run a task later: post_after / post_at, cancellable.
//
//   auto h = pools::reactor::post_after(ex, 250ms, [] { ... });
//   if (h.cancel()) { /* it will never run */ }
//
// The task is a completion handler of an asio::steady_timer on ex.next_context(). While it is
// pending it is *work*: stop() and the destructor wait for it (an accepted task is never
// dropped silently), so a long timer you no longer want must be cancelled — cancel() releases
// it at once, not at its deadline.
//
// Ownership, the reactor way: the pending handler owns the timer (through a shared state); the
// handle only observes it (std::weak_ptr). So a handle may be dropped, or outlive the executor,
// without keeping anything alive — there is no cycle and no timer outliving its io_context.
// Exactly one of "the task runs" and "cancel() returns true" happens, decided by one atomic.
// An exception from the task is reported like any handler's (pools/reactor/executor.hpp).
#pragma once

#include <pools/reactor/executor.hpp>
#include <pools/trace.hpp>

#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

namespace pools::reactor {

namespace detail {
struct timer_state {
  enum : int { pending, fired, cancelled };
  timer_state(boost::asio::io_context& ctx, std::chrono::steady_clock::time_point when) : timer(ctx, when) {}
  /// The handler's side: true if the task is to run (it won against cancel()).
  bool claim_for_run() noexcept { return phase.exchange(fired, std::memory_order_acq_rel) == pending; }

  boost::asio::steady_timer timer;
  std::atomic<int> phase{pending};
};
}  // namespace detail

/// Observes one scheduled task. Default-constructed: observes nothing.
class timer_handle {
 public:
  timer_handle() = default;

  /// Prevents the task from running, if it has not started yet: true if this call prevented it
  /// (the task is then destroyed without running, soon, on its reactor thread), false if it
  /// already ran or started, was cancelled before, or the handle is empty. Thread-safe. Out of
  /// memory (for the handler that wakes the wait early): std::bad_alloc, and nothing changed.
  bool cancel();
  /// True while the task is scheduled and neither run nor cancelled.
  bool pending() const noexcept;

 private:
  explicit timer_handle(std::weak_ptr<detail::timer_state> state) noexcept : state_(std::move(state)) {}
  template <class F>
  friend timer_handle post_at(executor& ex, std::chrono::steady_clock::time_point when, F&& f);

  std::weak_ptr<detail::timer_state> state_;
};

/// Runs f() on a reactor thread at `when` (or soon after), unless cancelled. Same stopping rules
/// as executor::next_context().
template <class F>
timer_handle post_at(executor& ex, std::chrono::steady_clock::time_point when, F&& f) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "post_at: f must be callable as f()");
  auto state = std::make_shared<detail::timer_state>(ex.next_context(), when);
  timer_handle handle{state};
  auto& timer = state->timer;  // taken before `state` moves into the handler
  // The handler owns the state (so the timer lives until it has completed) and the task. It
  // ignores the error code: the only way to abort this wait is cancel(), which claimed it first.
  timer.async_wait(
      [state = std::move(state), f = std::forward<F>(f)](const boost::system::error_code&) mutable {
        POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(state.get()));  // the wait completed (due or cancelled)
        if (state->claim_for_run()) f();
      });
  return handle;
}

/// Runs f() on a reactor thread after `delay`, unless cancelled.
template <class Rep, class Period, class F>
timer_handle post_after(executor& ex, std::chrono::duration<Rep, Period> delay, F&& f) {
  return post_at(
      ex, std::chrono::steady_clock::now() + std::chrono::ceil<std::chrono::steady_clock::duration>(delay),
      std::forward<F>(f));
}

}  // namespace pools::reactor
