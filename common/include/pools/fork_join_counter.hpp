// SPDX-License-Identifier: MIT
// pools/fork_join_counter.hpp — the join of work-first fork/join (continuation stealing): who
// resumes the parent, and when nothing atomic is needed at all.
//
// Work-first (Cilk's "work-first principle"): at a fork the worker runs the child at once and
// leaves the *parent's continuation* (the rest of the parent, after the fork) on its deque. If no
// thief takes it, the child, on finishing, pops it straight back and the parent goes on exactly
// as after an ordinary call. If a thief took it, the parent runs on in parallel on the thief, and
// child and parent meet again at the join: whichever of them arrives last goes on with the parent.
//
//   parent, at a fork:          forked()                       pending_ + 1           (plain)
//   child, finishing, when it   joined_inline()                pending_ - 1           (plain)
//     popped its parent back:
//   child, finishing, when it   child_arrives() -> last?       arrived_ - 1           (acq_rel RMW)
//     did not (parent stolen):
//   parent, at the join:        parent_arrives() -> all done?  arrived_ + pending_    (acq_rel RMW)
//                                                              only if pending_ != 0
//
// pending_ counts the forks whose completion the parent has not seen on its own thread. It is a
// plain integer because only the thread that holds the parent touches it: the parent itself, or a
// child that has just popped the parent from its own worker's deque (so nobody else can be
// running or holding the parent; the parent was pushed by that same thread, so the parent's last
// write of pending_ is on this thread too). When a thief takes the continuation, the steal
// (deque: release store of bottom, acquire load in steal) carries pending_ to the thief with the
// rest of the parent's frame. So in the unstolen case a fork and its join cost no atomic
// read-modify-write and no fence of their own: the deque's push and pop (pop's one seq_cst fence)
// are the whole price, and the join sees pending_ == 0 and does not even suspend.
//
// arrived_ counts, negatively, the children that finished without their parent. Children subtract
// 1 as they finish; the parent, at the join, adds pending_ (all the children it did not see
// finish). The counter starts at 0 and returns to 0 when the last of them has arrived, so a
// counter is reused for the next fork/join of the same parent. Who is last:
//   * Before the parent has added, arrived_ <= 0, so a child's fetch_sub(1) returns <= 0: no child
//     can think it is last while the parent has not arrived.
//   * The parent's fetch_add(k) returns the old value o: o + k == 0 means every child has already
//     subtracted, and the parent goes on itself.
//   * Otherwise exactly one child's fetch_sub returns 1 (the values the RMWs see are consecutive,
//     read-modify-writes of one variable being totally ordered): that child resumes the parent.
// Exactly one of them goes on with the parent, once.
//
// The memory orders, each an acq_rel read-modify-write on arrived_:
//   child_arrives(), fetch_sub: release publishes the child's result (written into its own frame,
//     which the parent reads after the join) and everything the child did; acquire, for the last
//     arriver, collects every earlier arriver's release — the other children's results and the
//     parent's writes before its join — because each RMW continues the release sequence of the
//     ones before it. The parent then runs on this thread and sees them all. (Mutant 1: relaxed.)
//   parent_arrives(), fetch_add: release publishes the parent's frame up to the join (locals the
//     parent wrote between fork and join) to the child that will resume it on another thread;
//     acquire, when the parent is the last, collects the children's results. (Mutant 2: relaxed.)
// After its RMW neither side may touch the counter or the parent's frame unless it is the one that
// goes on: the other may already be running the parent (and destroy the frame holding the counter).
//
// The counter knows nothing about coroutines: pools/coroutines/fork_scope.hpp uses it, and the
// Relacy model common/model/fork_join_model.cpp runs this same header with Relacy's atomics (as
// deque_model.cpp does for the deque). POOLS_FORK_JOIN_MUTANT=1 or =2 weakens one order, and the
// model test must then fail.
#pragma once

#include <pools/chase_lev_deque.hpp>  // std_atomics

#include <atomic>
#include <cstdint>

#ifndef POOLS_FORK_JOIN_MUTANT
#define POOLS_FORK_JOIN_MUTANT 0
#endif

namespace pools {

namespace detail {
// Mutant 1: a child's decrement becomes relaxed: the parent, resumed by the last child, may read a
// sibling's result before it is visible.
inline constexpr std::memory_order child_arrive_order =
    POOLS_FORK_JOIN_MUTANT == 1 ? std::memory_order_relaxed : std::memory_order_acq_rel;
// Mutant 2: the parent's addition becomes relaxed: the last child resumes the parent on its own
// thread without seeing what the parent wrote before the join (nor, when the parent is last,
// does the parent see the children's results).
inline constexpr std::memory_order parent_arrive_order =
    POOLS_FORK_JOIN_MUTANT == 2 ? std::memory_order_relaxed : std::memory_order_acq_rel;
}  // namespace detail

template <class Atomics = std_atomics>
class fork_join_counter {
 public:
  fork_join_counter() noexcept { arrived_.store(0, std::memory_order_relaxed); }  // before any fork
  fork_join_counter(const fork_join_counter&) = delete;
  fork_join_counter& operator=(const fork_join_counter&) = delete;

  /// The parent forks a child (before the child can run).
  void forked() noexcept { ++pending_; }
  /// A finishing child popped its parent back from its own worker's deque: it runs the parent
  /// next, on this thread, so its completion needs no atomic.
  void joined_inline() noexcept { --pending_; }
  /// Forks not yet seen complete by the parent's own thread: 0 means the join is free.
  std::int64_t pending() const noexcept { return pending_; }

  /// A finishing child whose parent was taken by someone else: true when it is the last to
  /// arrive and must resume the parent. Afterwards *this may be gone unless it returned true.
  bool child_arrives() noexcept { return arrived_.fetch_sub(1, detail::child_arrive_order) == 1; }

  /// The parent at the join, with pending() != 0: true when every child has already arrived (the
  /// parent goes on); false when the last child will resume it (then *this may be gone at once).
  bool parent_arrives() noexcept {
    const std::int64_t k = pending_;
    pending_ = 0;  // before the RMW: afterwards the frame may belong to the resuming child
    return arrived_.fetch_add(k, detail::parent_arrive_order) + k == 0;
  }

 private:
  std::int64_t pending_ = 0;  // plain: only the thread holding the parent (see above)
  typename Atomics::template atomic<std::int64_t> arrived_;
};

}  // namespace pools
