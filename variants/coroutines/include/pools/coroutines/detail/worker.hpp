// SPDX-License-Identifier: MIT
// pools/coroutines/detail/worker.hpp — one worker thread's state, and what a finishing coroutine
// runs next.
//
// A coroutine that finishes without a waiting parent (a when_all child that is not the last, a
// spawned or posted task) does not return to the worker loop if it can help it: it pops the next
// local item and transfers to it directly. Every `fairness_interval` completions it does return,
// so the loop can look at the injection queue and the timers, which pure fork/join would
// otherwise starve.
#pragma once

#include <pools/chase_lev_deque.hpp>
#include <pools/ready_fifo.hpp>
#include <pools/trace.hpp>

#include <atomic>
#include <coroutine>
#include <cstdint>

namespace pools::coroutines {
class thread_pool;
}

namespace pools::coroutines::detail {

inline constexpr std::uint32_t fairness_interval = 61;

struct worker {
  worker(thread_pool* p, unsigned i) : pool(p), index(i), rng(0x9E3779B97F4A7C15ull * (i + 1)) {}
  pools::chase_lev_deque<void*> deque;
  thread_pool* const pool;
  const unsigned index;
  std::uint32_t ticks = 0;  // completions since the loop last looked outside the deque
  std::uint64_t rng;        // xorshift state for picking victims; owner only
  // Coroutines resumed by completions the park hook runs (pools/ready_fifo.hpp says why not the
  // deque); owner only. in_hook is true while this worker is inside the hook's poll or park.
  bool in_hook = false;
  pools::ready_fifo<void*> io_ready;
  // Detached tasks (post, spawn) this worker started and finished, for the draining destructor
  // (thread_pool.hpp, started_outside_). Only this worker writes them; the drain reads them.
  // Their own cache line: the drain's reads, rare, must not disturb the lines above.
  alignas(64) std::atomic<std::int64_t> started{0};
  std::atomic<std::int64_t> finished{0};
  // The parking word: 1 while parked (or about to), 0 once a waker has chosen this worker.
  // On its own cache line: wakers write it, and the deque's hot lines must not share it.
  alignas(64) std::atomic<std::uint32_t> parked{0};
};

/// The worker running on this thread, or nullptr on any other thread.
extern constinit thread_local worker* tl_worker;

/// Pops the next item of the worker's deque for a finishing coroutine to transfer to; false when
/// the deque is empty or it is time for the worker loop to look outside (fairness tick).
/// Always inlined, with the deque's pop (chase_lev_deque.hpp): it runs at every task's end, and
/// GCC otherwise makes it, or the pop, a call once a translation unit has used up its budget for
/// inlining (--param inline-unit-growth), which depends on everything else in the unit.
[[gnu::always_inline]] inline bool pop_for_transfer(worker& w, void*& out) noexcept {
  if (++w.ticks >= fairness_interval) return false;  // the loop resets the tick
  if (!w.deque.pop(out)) return false;
  // Traced as taken here; the one caller that pushes the item back (join_state) posts it again.
  POOLS_TRACE_COROUTINE_RESUME(POOLS_TRACE_ID(out));
  return true;
}

/// What a finishing coroutine transfers to: the next item of this worker's deque, or
/// noop_coroutine() to return to the worker loop (deque empty, not a worker, or fairness tick).
inline std::coroutine_handle<> next_local_work() noexcept {
  worker* w = tl_worker;
  void* next = nullptr;
  if (w != nullptr && pop_for_transfer(*w, next)) return std::coroutine_handle<>::from_address(next);
  return std::noop_coroutine();
}

/// A spawned or posted coroutine finished on `pool`: counts it down for the draining destructor.
void detached_done(thread_pool* pool) noexcept;

}  // namespace pools::coroutines::detail
