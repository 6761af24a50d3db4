// SPDX-License-Identifier: MIT
#include <pools/reactor/timer.hpp>

#include <boost/asio/post.hpp>

#include <new>

namespace pools::reactor {

bool timer_handle::cancel() {
  auto state = state_.lock();
  if (!state) return false;  // the handler has completed and released the state
  int expected = detail::timer_state::pending;
  if (!state->phase.compare_exchange_strong(expected, detail::timer_state::cancelled,
                                            std::memory_order_acq_rel))
    return false;
  // Wake the wait now rather than at its deadline, so it stops counting as work: a cancelled
  // one-hour timer must not hold stop() for an hour. Timer objects are not thread-safe, so the
  // cancel runs as a handler on the timer's own executor. The io_context is still running:
  // having won the exchange, the wait handler has not run yet, so its work is still counted.
  try {
    boost::asio::post(state->timer.get_executor(), [state] { state->timer.cancel(); });
  } catch (const std::bad_alloc&) {
    // No memory for that handler. Undo the claim if the wait has not seen it: then nothing has
    // changed, and the caller learns why (the timer stays, and will run). If the wait completed in
    // between, it saw our claim and dropped the task: cancelled, and nothing is left to wake.
    expected = detail::timer_state::cancelled;
    if (state->phase.compare_exchange_strong(expected, detail::timer_state::pending,
                                             std::memory_order_acq_rel))
      throw;
  }
  return true;
}

bool timer_handle::pending() const noexcept {
  const auto state = state_.lock();
  return state && state->phase.load(std::memory_order_acquire) == detail::timer_state::pending;
}

}  // namespace pools::reactor
