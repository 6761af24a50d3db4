// SPDX-License-Identifier: MIT
// The strategies (pools/sim/random_walk.hpp, pools/sim/pct.hpp) and make_strategy().
#include <pools/sim/pct.hpp>
#include <pools/sim/random_walk.hpp>
#include <pools/sim/strategy.hpp>

#include <fmt/core.h>

#include <charconv>
#include <stdexcept>

namespace pools::sim {

pct::pct(unsigned depth, std::uint64_t steps) : depth_(depth), steps_(steps) {
  if (depth == 0) throw std::invalid_argument("pools::sim::pct: the depth must be at least 1");
  if (steps == 0) throw std::invalid_argument("pools::sim::pct: the number of steps must be at least 1");
}

void pct::begin(std::uint64_t seed) {
  rng_ = rng(seed);
  priority_.clear();
  change_points_.clear();
  changes_done_ = 0;
  // d-1 change points, uniformly among the first n steps (a repeated one counts once).
  for (unsigned i = 1; i < depth_; ++i) change_points_.push_back(rng_.below(steps_));
  std::sort(change_points_.begin(), change_points_.end());
}

void pct::task_created(task_id t) {
  if (priority_.size() <= t) priority_.resize(t + std::size_t{1}, 0);
  // Above every lowered priority (1 .. d-1): d + a random number. A tie (one chance in 2^63)
  // goes to the older task in pick().
  priority_[t] = depth_ + (rng_.next() >> 1U);
}

std::size_t pct::pick(std::span<const task_id> ready, std::uint64_t step) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < ready.size(); ++i)
    if (priority_.at(ready[i]) > priority_.at(ready[best])) best = i;
  // A change point: the task about to run drops below all others, to d-1, then d-2, ...
  while (changes_done_ < change_points_.size() && change_points_[changes_done_] <= step) {
    if (change_points_[changes_done_] == step) {
      priority_.at(ready[best]) = depth_ - 1 - changes_done_;
      ++changes_done_;
      // The task lost its turn before it ran this step: pick again under the new priorities.
      best = 0;
      for (std::size_t i = 1; i < ready.size(); ++i)
        if (priority_.at(ready[i]) > priority_.at(ready[best])) best = i;
    } else {
      ++changes_done_;  // a repeated change point
    }
  }
  return best;
}

std::string pct::spec() const {
  return fmt::format("pct:{}:{}", depth_, steps_);
}

namespace {
template <class Int>
bool parse(std::string_view s, Int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}
}  // namespace

std::unique_ptr<strategy> make_strategy(std::string_view spec) {
  const auto bad = [&]() {
    return std::invalid_argument(
        fmt::format("unknown simulation strategy '{}': use random, pct, pct:D (depth D >= 1) or pct:D:N "
                    "(N >= 1: the expected steps of a run)",
                    spec));
  };
  if (spec == "random") return std::make_unique<random_walk>();
  if (spec.substr(0, 3) != "pct") throw bad();
  std::string_view rest = spec.substr(3);
  unsigned depth = 3;
  std::uint64_t steps = 200;
  if (!rest.empty()) {
    if (rest.front() != ':') throw bad();
    rest.remove_prefix(1);
    const auto colon = rest.find(':');
    if (!parse(rest.substr(0, colon), depth) || depth == 0) throw bad();
    if (colon != std::string_view::npos && (!parse(rest.substr(colon + 1), steps) || steps == 0)) throw bad();
  }
  return std::make_unique<pct>(depth, steps);
}

}  // namespace pools::sim
