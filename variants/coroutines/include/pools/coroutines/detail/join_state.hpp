// SPDX-License-Identifier: MIT
// pools/coroutines/detail/join_state.hpp — the counter a when_all parent waits on.
//
// The parent is suspended, not blocked: it stores its handle here and its children count down.
// The child whose decrement reaches zero resumes the parent by symmetric transfer, on whatever
// worker that child finished; every other child, on finishing, moves on to the next local work.
#pragma once

#include <pools/coroutines/detail/worker.hpp>

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <stop_token>

namespace pools::coroutines::detail {

class join_state {
 public:
  explicit join_state(std::size_t children) noexcept : remaining_(children) {}
  join_state(const join_state&) = delete;
  join_state& operator=(const join_state&) = delete;

  void set_parent(std::coroutine_handle<> parent) noexcept { parent_ = parent; }
  /// For a join of exactly two children: child 1, the one child 0 may pop back (see child_done).
  void set_pair_sibling(std::coroutine_handle<> second) noexcept { pair_sibling_ = second; }

  /// Called by a finishing child from its final suspend point; returns what to run next.
  ///
  /// Most joins in fine-grained fork/join are never split by a thief, so the counter is touched
  /// with a read-modify-write only when it must be:
  ///  * the last child to finish sees remaining_ == 1 with a plain load: every sibling has already
  ///    counted down and none will touch the counter again;
  ///  * child 0 of a pair that pops child 1 straight back (not stolen) runs it next on this thread:
  ///    nobody else can reach the counter, so a plain store records child 0's completion.
  /// Only a child that finishes while a sibling may be running elsewhere pays the fetch_sub.
  std::coroutine_handle<> child_done() noexcept {
    const std::coroutine_handle<> parent = parent_;
    // acquire: pairs with the siblings' release decrements; their results are visible to the
    // parent, which this thread resumes.
    if (remaining_.load(std::memory_order_acquire) == 1) return parent;
    worker* w = tl_worker;
    void* next = nullptr;
    const bool popped = w != nullptr && pop_for_transfer(*w, next);
    if (popped && next == pair_sibling_.address()) {
      // relaxed: child 1 reads it on this thread, or on another one after a suspension whose
      // hand-off synchronises; no other thread can access the counter until then.
      remaining_.store(1, std::memory_order_relaxed);
      return pair_sibling_;
    }
    // acq_rel: release publishes this child's result (and all it wrote) to the last child;
    // acquire in the last child collects every sibling's release, so the parent, resumed on that
    // thread, sees every result. After this decrement *this may be destroyed by the parent
    // (resumed elsewhere), so only locals are used below.
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (popped) {
        w->deque.push(next);  // we are last after all: the popped item waits its turn
        POOLS_TRACE_POST(w->pool, POOLS_TRACE_ID(next));
      }
      return parent;
    }
    return popped ? std::coroutine_handle<>::from_address(next) : std::noop_coroutine();
  }

  /// when_all under a stop token gives its join a stop source of its own (linked to the token):
  /// the children run under that source's token, and the first failure stops the siblings.
  void set_stop_source(std::stop_source* source) noexcept { stop_ = source; }
  /// A child finished with an exception (before its child_done): its siblings are asked to stop.
  /// request_stop() is thread-safe and runs the siblings' stop callbacks on this thread.
  /// Out of line and cold: inlined, request_stop() made task<T>'s final awaiter, which calls this,
  /// too big for GCC to inline into the coroutine bodies in some translation units and not in
  /// others, so the cost of every when_all child's end depended on what else the unit held.
  [[gnu::noinline, gnu::cold]] void child_failed() noexcept {
    if (stop_ != nullptr) stop_->request_stop();
  }

 private:
  std::atomic<std::size_t> remaining_;
  std::coroutine_handle<> parent_;
  std::coroutine_handle<> pair_sibling_;
  std::stop_source* stop_ = nullptr;  // null: failures stop nobody (the when_all runs under no token)
};

}  // namespace pools::coroutines::detail
