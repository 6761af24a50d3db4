// SPDX-License-Identifier: MIT
// pools/fibers/this_fiber.hpp — what a fiber can do to itself (the std::this_thread of fibers).
//
// Called on a plain thread (not a fiber of any pools::fibers::thread_pool), each function falls
// back to its std::this_thread counterpart, so code can be shared between the two worlds.
//
// The stop token. A fiber started with pool.spawn(token, f) (or post(token, f)) runs under
// `token`: get_stop_token() returns it anywhere in f's call tree, and every cancellable wait in
// that tree (channel, future, condition_variable, latch, wait_group, sleep_for/sleep_until,
// offload) throws operation_cancelled when it is stopped — the fibers' form of Boost.Thread's
// interruption points, with std::stop_token. Functions called by f share its token as they share
// its stack; a fiber spawned by f runs under none unless given one (when_any and with_timeout
// give theirs a token linked to the caller's).
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>

#include <chrono>
#include <stop_token>
#include <thread>

namespace pools::fibers::this_fiber {

/// Whether the caller runs on a fiber of some pools::fibers::thread_pool.
inline bool is_fiber() noexcept {
  return detail::current_fiber() != nullptr;
}

/// The stop token the calling fiber's task runs under (see above); an empty token
/// (stop_possible() false) in a task started without one, or on a plain thread.
inline std::stop_token get_stop_token() noexcept {
  const std::stop_token* token = detail::current_stop_token();
  return token != nullptr ? *token : std::stop_token{};
}

/// Lets other ready fibers run first: the caller goes to the back of its pool's shared queue.
/// Returns at once when nothing else is waiting to run.
inline void yield() {
  if (is_fiber()) {
    detail::yield_fiber();
  } else {
    std::this_thread::yield();
  }
}

/// Suspends the calling fiber until `deadline`; its worker runs other fibers meanwhile. The wake
/// comes from the pool's timer queue, which workers check whenever they look for work and wait
/// on when idle (README, "The scheduler"). Resolution: a worker busy in a long computation that never
/// suspends delays it, as with any cooperative scheduler. Cancellable on a fiber: throws
/// operation_cancelled when its stop token is stopped first (or already is, even for a deadline
/// that has passed); the timer leaves the pool's queue at once.
template <class Clock, class Duration>
void sleep_until(const std::chrono::time_point<Clock, Duration>& deadline) {
  if (is_fiber()) {
    detail::sleep_fiber_until(detail::to_steady(deadline));
  } else {
    std::this_thread::sleep_until(deadline);
  }
}

/// On a fiber of pools::fibers::simulated, `duration` passes on the simulator's virtual clock
/// (detail::clock_now(); simulated.hpp, "TIME"): a 30 s sleep takes no wall time.
template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& duration) {
  sleep_until(detail::clock_now() + std::chrono::ceil<std::chrono::steady_clock::duration>(duration));
}

}  // namespace pools::fibers::this_fiber
