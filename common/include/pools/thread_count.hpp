// SPDX-License-Identifier: MIT
// pools/thread_count.hpp — what a thread count of 0 means, the same in every pool.
//
// Every pool's constructor takes a number of worker threads, and 0 means "one per hardware
// thread": std::thread::hardware_concurrency(), or 1 where the system cannot tell (the standard
// lets that call return 0). So `pool(std::thread::hardware_concurrency())` and `pool(0)` start the
// same workers in every variant, and neither throws.
#pragma once

#include <algorithm>
#include <cstddef>
#include <thread>

namespace pools {

/// The number of workers a pool starts when asked for `requested`: `requested`, or for 0 one per
/// hardware thread (at least 1).
inline std::size_t thread_count(std::size_t requested) noexcept {
  if (requested != 0) return requested;
  return std::max<std::size_t>(std::thread::hardware_concurrency(), 1);
}

}  // namespace pools
