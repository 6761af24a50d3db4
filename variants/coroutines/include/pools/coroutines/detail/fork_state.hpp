// SPDX-License-Identifier: MIT
// pools/coroutines/detail/fork_state.hpp — what a fork_scope keeps in its parent's frame: the
// join counter (pools/fork_join_counter.hpp) and the first exception of its children; and where a
// forked child goes when it finishes.
//
// A forked child finishes in one of three ways (child_done):
//   1. It pops its own parent back from its worker's deque: nobody stole the parent. The child
//      runs the parent next on this thread, exactly as a function returns to its caller; the
//      join is told with a plain decrement. No atomic read-modify-write, no fence beyond the
//      deque's pop.
//   2. It pops something else, or nothing: the parent was taken by someone else (a thief; this
//      worker's loop, when the child suspended on a timer, a lock or a channel; or the child now
//      runs on another worker). It arrives at the counter with an acq_rel fetch_sub; the last to
//      arrive (child or parent) goes on with the parent, by symmetric transfer.
//   3. As 2, but a fairness tick says to return to the worker loop first (pop_for_transfer takes
//      nothing): the parent is then treated as taken, which is correct, only slower.
// In cases 2 and 3 this worker leaves the strand the child ran in before it has finished (the
// parent goes on elsewhere, or later): it gives up its stack of frames first if that holds
// frames, *before* the arrival, whose release hands them to whoever resumes the parent
// (frame_stack.hpp, case (a)).
#pragma once

#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/frame_stack.hpp>
#include <pools/fork_join_counter.hpp>
#include <pools/trace.hpp>

#include <atomic>
#include <coroutine>
#include <exception>
#include <utility>

namespace pools::coroutines::detail {

class fork_state {
 public:
  fork_state() = default;
  fork_state(const fork_state&) = delete;
  fork_state& operator=(const fork_state&) = delete;

  pools::fork_join_counter<>& counter() noexcept { return counter_; }

  /// A forked child finished (its final suspend point); returns what this thread runs next.
  /// `error` is the child's stored exception, if any: kept for the join.
  /// Not inlined into the final suspend point of every task: that point also serves when_all's
  /// children and plain co_await, and inlining this there made GCC 12 compile those paths worse
  /// (bench/instructions.py: coroutines/fork_join 373 instructions instead of 362, above its 3 %
  /// guard, for a work-first fork_join_workfirst of 437 instead of 465).
  [[gnu::noinline]] std::coroutine_handle<> child_done(std::coroutine_handle<> parent,
                                                       const std::exception_ptr& error) noexcept {
    if (error) [[unlikely]]
      note_error(error);  // before the arrival below, whose release publishes it
    worker* w = tl_worker;
    void* next = nullptr;
    const bool popped = w != nullptr && pop_for_transfer(*w, next);
    if (popped && next == parent.address()) {
      counter_.joined_inline();  // case 1: we hold the parent; it runs next, here
      return parent;
    }
    // Case 2. The frames on this worker's stack may be freed by the parent's thread once we
    // arrive: give the stack up before. After the RMW *this may be destroyed by the parent
    // (resumed elsewhere) unless we are the last: only locals are used below.
    frame_stack::leave_strand();
    if (counter_.child_arrives()) {
      if (popped) {
        w->deque.push(next);  // we go on with the parent: the popped item waits its turn
        POOLS_TRACE_POST(w->pool, POOLS_TRACE_ID(next));
      }
      return parent;
    }
    return popped ? std::coroutine_handle<>::from_address(next) : std::noop_coroutine();
  }

  /// A child's exception (a forked child at its end, or a called one after it returned). The
  /// first one is kept; several children may fail at once on different threads, so the flag
  /// decides which one writes error_. relaxed: the exchanges of one atomic are totally ordered,
  /// so exactly one sees false; error_ itself is published to the parent by the writer's arrival
  /// at the join (acq_rel) or is on the parent's own thread (a called child, an inline join).
  void note_error(const std::exception_ptr& error) noexcept {
    if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = error;
  }

  /// After the join: rethrows the first child exception, if any, and resets for the next join.
  void rethrow_if_error() {
    if (error_ != nullptr) [[unlikely]] {
      // relaxed: every child has arrived (the join), so no other thread touches the flag now.
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(std::exchange(error_, nullptr));
    }
  }

 private:
  pools::fork_join_counter<> counter_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // written by the child whose exchange won; read after the join
};

}  // namespace pools::coroutines::detail
