// SPDX-License-Identifier: MIT
// pools/sim/virtual_clock.hpp — the simulated time: it moves only when the simulator moves it.
//
// A simulated run starts at time zero. Each step (one runnable item run to its next suspension)
// costs `scheduler::options::step_cost` of virtual time (1 us by default), so the steps of a trace
// follow each other. When nothing can run, the clock jumps straight to the earliest timer: a task
// that sleeps 30 seconds waits 30 virtual seconds and no wall time at all.
//
// virtual_clock satisfies the standard's Clock requirements, so std::chrono arithmetic works on it.
// now() reads the scheduler running on the calling thread (pools/sim/scheduler.hpp) and throws
// std::logic_error on a thread that runs no simulation.
#pragma once

#include <chrono>

namespace pools::sim {

struct virtual_clock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<virtual_clock>;
  static constexpr bool is_steady = true;

  /// The current simulation's time; throws std::logic_error outside a simulation.
  static time_point now();
};

}  // namespace pools::sim
