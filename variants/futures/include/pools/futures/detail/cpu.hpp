// pools/futures/detail/cpu.hpp — the two machine facts the pool's hot path is laid out around.
#pragma once

#include <cstddef>

namespace pools::futures::detail {

/// Data written by different threads lives on different cache lines, so a store by one thread
/// does not invalidate what another is reading ("false sharing"). 64 bytes on x86-64 and most
/// ARM cores. Not std::hardware_destructive_interference_size: GCC warns that its value may
/// differ between translation units compiled for different CPUs, which would break the layout.
inline constexpr std::size_t cache_line = 64;

/// One spin-wait step: tells the core this is a busy-wait loop, which frees pipeline resources
/// for the sibling hyper-thread and avoids a memory-order mis-speculation when the loop exits.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace pools::futures::detail
