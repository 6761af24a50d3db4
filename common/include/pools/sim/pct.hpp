// SPDX-License-Identifier: MIT
// pools/sim/pct.hpp — Probabilistic Concurrency Testing with depth d (Burckhardt, Kothari,
// Musuvathi, Nagarakatte, ASPLOS 2010).
//
// A bug's *depth* is the number of ordering constraints it needs: "B runs between A's check and
// A's act" is depth 2 (B after A's check, and before A's act). PCT gives every task a random
// priority above d and always runs the highest-priority ready task. It also picks d-1 random
// *change points* among the first n steps: at change point i, the task about to run drops to
// priority d-i, below every task that has not dropped. A run of k tasks and n steps then hits any
// given depth-d bug with probability at least 1/(n·k^(d-1)): for d = 2, one seed in n·k finds it,
// however late in the run the constraint falls (random walk's chance shrinks with every step).
//
// Tasks appear while the program runs (a fork, a post), so a new task draws its priority when
// it is created; n is given (pct:D:N), as the paper assumes a bound on the steps.
#pragma once

#include <pools/sim/rng.hpp>
#include <pools/sim/strategy.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pools::sim {

class pct final : public strategy {
 public:
  /// depth >= 1 (1: no change point, each run one fixed priority order); steps >= 1.
  pct(unsigned depth, std::uint64_t steps);

  void begin(std::uint64_t seed) override;
  void task_created(task_id t) override;
  std::size_t pick(std::span<const task_id> ready, std::uint64_t step) override;
  std::string spec() const override;

 private:
  unsigned depth_;
  std::uint64_t steps_;
  rng rng_{0};
  std::vector<std::uint64_t> priority_;       // by task id; higher runs first
  std::vector<std::uint64_t> change_points_;  // steps at which the running task drops (sorted)
  std::size_t changes_done_ = 0;
};

}  // namespace pools::sim
