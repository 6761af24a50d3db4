// SPDX-License-Identifier: MIT
// pools/sim/strategy.hpp — who runs next: the one decision a scheduler makes, made by a seed.
//
// At each step the simulator lists the tasks that have something to run (each task's items run
// in the order they became ready, so a task never overtakes itself) and asks its strategy which
// one goes. Everything else is deterministic, so a strategy and a seed are one schedule.
//
// Two strategies: random_walk (pools/sim/random_walk.hpp: any ready task, uniformly) and pct
// (pools/sim/pct.hpp: priorities with d-1 change points, the bound of Burckhardt et al.).
// make_strategy() builds one from its name, as the command line and POOLS_SIM_STRATEGY spell it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace pools::sim {

/// A simulated task: a number given in creation order (0, 1, 2, ...), the same in every run.
using task_id = std::uint32_t;

class strategy {
 public:
  virtual ~strategy() = default;
  strategy() = default;
  strategy(const strategy&) = delete;
  strategy& operator=(const strategy&) = delete;

  /// A new run with this seed: forget every earlier decision.
  virtual void begin(std::uint64_t seed) = 0;
  /// Task `t` was created (tasks are created in the same order in every run with the same seed).
  virtual void task_created(task_id t) = 0;
  /// Step number `step` (0, 1, ...): returns the index in `ready` of the task that runs. `ready`
  /// is never empty and lists each ready task once, in the order their oldest items arrived.
  virtual std::size_t pick(std::span<const task_id> ready, std::uint64_t step) = 0;
  /// How the command line names this strategy with its parameters ("random", "pct:3:200").
  virtual std::string spec() const = 0;
};

/// Builds a strategy from its name: "random", "pct" (depth 3), "pct:D" (depth D >= 1) or
/// "pct:D:N" (N: the expected number of steps of a run, where PCT places its change points;
/// 200 when not given). Throws std::invalid_argument, saying what is accepted, for anything else.
std::unique_ptr<strategy> make_strategy(std::string_view spec);

}  // namespace pools::sim
