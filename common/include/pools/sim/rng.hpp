// SPDX-License-Identifier: MIT
// pools/sim/rng.hpp — the simulator's random numbers: SplitMix64, the same on every platform.
//
// A seed must name one schedule on every machine and every standard library, so the simulator
// does not use std::uniform_int_distribution (its algorithm is left to the implementation). This
// generator is fully specified: the same seed gives the same numbers everywhere.
#pragma once

#include <cstdint>

namespace pools::sim {

class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept : state_(seed) {}

  /// The next 64 random bits (SplitMix64, Steele, Lea and Flood, OOPSLA 2014).
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
  }

  /// A number in [0, n), n > 0. (The modulo's bias is below n / 2^64: nothing a schedule notices.)
  std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }

 private:
  std::uint64_t state_;
};

}  // namespace pools::sim
