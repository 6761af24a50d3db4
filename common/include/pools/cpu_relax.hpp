// SPDX-License-Identifier: MIT
// pools/cpu_relax.hpp — one step of a spin-wait loop.
#pragma once

#include <atomic>

namespace pools {

/// One pause instruction: tells the core this is a busy-wait loop, which saves power, frees
/// pipeline resources for the sibling hyper-thread and avoids a memory-order mis-speculation
/// penalty when the loop exits. Elsewhere, only a compiler barrier: the caller's loop re-reads.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace pools
