// SPDX-License-Identifier: MIT
// pools/sim/random_walk.hpp — at every step, any ready task, uniformly at random.
//
// The simplest explorer, and a good one when a bug needs many small preemptions. Its weakness
// is a bug that needs one task to be held back for a long time (a depth-2 bug whose second
// event comes late): each step it gives every ready task the same chance, so a long run of
// "not you" becomes unlikely. PCT (pools/sim/pct.hpp) is built for that case.
#pragma once

#include <pools/sim/rng.hpp>
#include <pools/sim/strategy.hpp>

namespace pools::sim {

class random_walk final : public strategy {
 public:
  void begin(std::uint64_t seed) override { rng_ = rng(seed); }
  void task_created(task_id /*t*/) override {}
  std::size_t pick(std::span<const task_id> ready, std::uint64_t /*step*/) override {
    return static_cast<std::size_t>(rng_.below(ready.size()));
  }
  std::string spec() const override { return "random"; }

 private:
  rng rng_{0};
};

}  // namespace pools::sim
