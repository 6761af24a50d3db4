// SPDX-License-Identifier: MIT
// work_deque.hpp — exercise 03-work-stealing: the deque each worker of your pool owns. Given; do not
// edit: the check counts through it what your pool really does.
//
// exercise::work_deque<T> is pools::chase_lev_deque<T> (common/include/pools/chase_lev_deque.hpp),
// the same three operations with the same rules (push and pop by the owner only, steal by any
// thread), plus three events it reports to the check: every push, every successful steal made by
// a thread that is NOT the deque's owner (the thread that pushes onto it), and every such steal
// that came back without a task (empty, or lost a race). So the check knows how many tasks went
// onto a worker's own deque and how many one worker took from another without asking your pool:
// steals() and local_pushes() are compared with what the deques saw.
#pragma once

#include <pools/chase_lev_deque.hpp>

#include <atomic>
#include <cstddef>

namespace exercise {

/// What the deques report; defined by the check (check.cpp), which adds them up.
struct deque_events {
  static void pushed();
  static void stolen_by_another_thread();
  static void steal_failed_for_another_thread();
};

template <class T>
class work_deque {
 public:
  explicit work_deque(std::size_t initial_capacity = 256) : deque_(initial_capacity) {}

  /// Owner only (the first thread that pushes is the owner).
  void push(T value) {
    // relaxed: only the owner stores, and it only compares with its own earlier store; a thief
    // reads it after taking an item, which the deque's own acquire/release orders after this.
    if (owner_.load(std::memory_order_relaxed) == nullptr)
      owner_.store(&thread_marker, std::memory_order_relaxed);
    deque_.push(value);
    deque_events::pushed();
  }

  /// Owner only. The newest item; false when empty.
  bool pop(T& out) { return deque_.pop(out); }

  /// Any thread. The oldest item.
  pools::steal_result<T> steal() {
    pools::steal_result<T> r = deque_.steal();
    // relaxed: see push(). The address of a thread_local tells one thread from another.
    if (owner_.load(std::memory_order_relaxed) != &thread_marker) {
      if (r.status == pools::steal_status::success) {
        deque_events::stolen_by_another_thread();
      } else {
        deque_events::steal_failed_for_another_thread();
      }
    }
    return r;
  }

  /// A hint (it may be stale at once): true when the deque looked empty.
  bool looks_empty() const { return deque_.looks_empty(); }

 private:
  static inline thread_local char thread_marker = 0;
  pools::chase_lev_deque<T> deque_;
  std::atomic<const char*> owner_{nullptr};
};

}  // namespace exercise
