// SPDX-License-Identifier: MIT
// pools/sim/blocking_wait.hpp — why a blocking wait cannot be simulated, as an exception.
//
// A simulated run has one thread: every task's steps run on it, one after the other. A step that
// *blocks* that thread (std::future::get() on a result not yet there, a condition variable, a
// std::mutex another task holds) waits for a task that can only run on this very thread, after
// the step returns: it would wait for ever. So an adapter that sees a blocking wait coming (the
// futures adapter's get(), pools/futures/simulated.hpp) throws blocking_wait_error instead: the
// step stops, the run stops, and the message says why. On a real pool of N threads the same
// wait deadlocks as soon as N tasks do it at once (variants/futures/README.md, "Why nested waits
// deadlock"): the simulator shows with one thread what a pool shows with N.
#pragma once

#include <stdexcept>
#include <string>

namespace pools::sim {

class blocking_wait_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws blocking_wait_error for a blocking `call` ("std::future::get()") in the running step of
/// the current simulation, naming the task and the step.
[[noreturn]] void throw_blocking_wait(const std::string& call);

}  // namespace pools::sim
