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
  /// Case 1 is all this function does itself; the other cases and an exception are tail calls
  /// out of line (parent_taken, the cold child_failed). So it needs no stack frame and no
  /// callee-saved register: case 1, nearly every call, saves and restores nothing that only the
  /// others use.
  [[gnu::noinline]] std::coroutine_handle<> child_done(std::coroutine_handle<> parent,
                                                       const std::exception_ptr& error) noexcept {
    if (error) [[unlikely]]
      return child_failed(parent, error);  // notes it, then ends here without it
    worker* w = tl_worker;
    void* next = nullptr;
    if (w != nullptr && pop_for_transfer(*w, next)) [[likely]] {
      if (next == parent.address()) [[likely]] {
        counter_.joined_inline();  // case 1: we hold the parent; it runs next, here
        return parent;
      }
      return parent_taken(parent, next);  // case 2, holding an item of our own
    }
    return parent_taken(parent, nullptr);  // case 2 with an empty deque, or case 3
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
  /// The test is inlined into every join; the throw is out of line (cold), which keeps this small
  /// enough to inline.
  void rethrow_if_error() {
    if (error_ != nullptr) [[unlikely]]
      rethrow_error();
  }

 private:
  /// child_done for a child that failed: its exception is noted before the arrival (whose
  /// release publishes it to the parent), then the child ends as any other.
  [[gnu::noinline, gnu::cold]] std::coroutine_handle<> child_failed(
      std::coroutine_handle<> parent, const std::exception_ptr& error) noexcept {
    note_error(error);
    return child_done(parent, std::exception_ptr());
  }

  [[noreturn, gnu::noinline, gnu::cold]] void rethrow_error() {
    // relaxed: every child has arrived (the join), so no other thread touches the flag now.
    failed_.store(false, std::memory_order_relaxed);
    std::rethrow_exception(std::exchange(error_, nullptr));
  }

  /// Cases 2 and 3 of child_done: the parent was taken by someone else. `popped` is the item
  /// this worker popped instead of the parent (non-null: a deque holds coroutine addresses),
  /// or nullptr.
  [[gnu::noinline]] std::coroutine_handle<> parent_taken(std::coroutine_handle<> parent,
                                                         void* popped) noexcept {
    // The frames on this worker's stack may be freed by the parent's thread once we arrive:
    // give the stack up before. After the RMW *this may be destroyed by the parent (resumed
    // elsewhere) unless we are the last: only locals are used below.
    frame_stack::leave_strand();
    if (counter_.child_arrives()) {
      if (popped != nullptr) {
        worker* w = tl_worker;  // non-null: only a worker pops
        w->deque.push(popped);  // we go on with the parent: the popped item waits its turn
        POOLS_TRACE_POST(w->pool, POOLS_TRACE_ID(popped));
      }
      return parent;
    }
    return popped != nullptr ? std::coroutine_handle<>::from_address(popped) : std::noop_coroutine();
  }

  pools::fork_join_counter<> counter_;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;  // written by the child whose exchange won; read after the join
};

}  // namespace pools::coroutines::detail
