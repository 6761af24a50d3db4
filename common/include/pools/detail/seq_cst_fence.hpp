// SPDX-License-Identifier: MIT
// pools/detail/seq_cst_fence.hpp — the seq_cst fence, and its stand-in under ThreadSanitizer.
//
// ThreadSanitizer does not model std::atomic_thread_fence (GCC warns, and TSan may report races
// that the fence prevents). Under TSan only, the fence becomes an acq_rel read-modify-write of
// one shared word: all such RMWs are totally ordered on that word and each synchronises with the
// one before it, so of two "fences" the later one happens-after the earlier — the property the
// store-buffering handshakes of the pools rely on (whichever side comes second sees the other's
// store), in a form TSan understands. Production builds use the real fence; the Relacy model test
// (common/model/) checks the deque with the real fence.
#pragma once

#include <atomic>

#if defined(POOLS_TSAN) || defined(__SANITIZE_THREAD__)
#define POOLS_FENCE_RMW 1
#else
#define POOLS_FENCE_RMW 0
#endif

namespace pools::detail {

#if POOLS_FENCE_RMW
inline std::atomic<unsigned> tsan_fence_word{0};
#endif

inline void seq_cst_fence() noexcept {
#if POOLS_FENCE_RMW
  tsan_fence_word.fetch_add(1, std::memory_order_acq_rel);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace pools::detail
