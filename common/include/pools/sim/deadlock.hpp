// SPDX-License-Identifier: MIT
// pools/sim/deadlock.hpp — what the simulator throws when nothing can run and tasks still wait.
//
// In a simulation the scheduler sees everything: when no item is ready and no timer is pending,
// no event can ever wake the tasks that still wait, so the run is stuck for good. The report
// names each waiting task and what it waits on, in task order:
//
//   deadlock at 0.000012 s (step 9): nothing can run and 2 tasks wait
//     task 1 "philosopher 0" waits on async_mutex 0x7ffd...
//     task 2 "philosopher 1" waits on async_mutex 0x7ffd...
#pragma once

#include <pools/sim/strategy.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace pools::sim {

class deadlock_error : public std::runtime_error {
 public:
  struct waiter {
    task_id task;
    std::string name;  // the task's name
    std::string what;  // what it waits on
  };

  deadlock_error(const std::string& message, std::vector<waiter> waiters)
      : std::runtime_error(message), waiters_(std::move(waiters)) {}

  const std::vector<waiter>& waiters() const noexcept { return waiters_; }

 private:
  std::vector<waiter> waiters_;
};

/// A run took more steps than scheduler::options::max_steps: a livelock, or a program too long
/// to simulate in one run.
class step_limit_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace pools::sim
