// SPDX-License-Identifier: MIT
// pools/cache_line.hpp — the machine fact hot shared data is laid out around.
// (The other one, the spin-wait pause, is pools/cpu_relax.hpp.)
#pragma once

#include <cstddef>

namespace pools {

/// Data written by different threads lives on different cache lines, so a store by one thread
/// does not invalidate what another is reading ("false sharing"). 64 bytes on x86-64 and most
/// ARM cores. Not std::hardware_destructive_interference_size: GCC warns that its value may
/// differ between translation units compiled for different CPUs, which would break the layout.
inline constexpr std::size_t cache_line = 64;

}  // namespace pools
