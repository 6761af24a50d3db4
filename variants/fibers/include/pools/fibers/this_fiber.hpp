// SPDX-License-Identifier: MIT
// pools/fibers/this_fiber.hpp — what a fiber can do to itself (the std::this_thread of fibers).
//
// Called on a plain thread (not a fiber of any pools::fibers::thread_pool), each function falls
// back to its std::this_thread counterpart, so code can be shared between the two worlds.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>

#include <chrono>
#include <thread>

namespace pools::fibers::this_fiber {

/// Whether the caller runs on a fiber of some pools::fibers::thread_pool.
inline bool is_fiber() noexcept {
  return detail::current_fiber() != nullptr;
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
/// suspends delays it, as with any cooperative scheduler.
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
