// SPDX-License-Identifier: MIT
// pools/futures/detail/shared_callable.hpp — one loop body shared by all the tasks of a loop.
//
// detach_loop / detach_blocks / detach_sequence split one call into many tasks that all call the
// same function object. Copying it into every task could be expensive (or impossible), and a
// std::shared_ptr is 16 bytes: together with a block's two indices the task would no longer fit
// the 24-byte inline buffer of pools::task_function and every block would cost a malloc. This
// handle is one pointer to {callable, reference count}, so [handle, begin, end] fits: a loop
// costs one allocation in total, not one per block.
//
// The count matters when tasks are dropped unrun (purge(), or destroying a paused pool): the
// dropped task's handle still releases its reference, so nothing leaks.
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace pools::futures::detail {

template <class F>
class shared_callable {
 public:
  template <class G>
    requires(!std::is_same_v<std::remove_cvref_t<G>, shared_callable>)
  explicit shared_callable(G&& fn) : state_(new state{F(std::forward<G>(fn))}) {}

  shared_callable(const shared_callable& other) noexcept : state_(other.state_) {
    // relaxed: a new reference is made from an existing one, which already keeps state_ alive.
    state_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  shared_callable(shared_callable&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  shared_callable& operator=(const shared_callable&) = delete;
  shared_callable& operator=(shared_callable&&) = delete;

  ~shared_callable() {
    // acq_rel: every task's use of the callable happens before the last one deletes it.
    if (state_ != nullptr && state_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete state_;
  }

  /// The shared callable, called as an lvalue, possibly by several workers at once.
  F& get() const noexcept { return state_->fn; }

 private:
  struct state {
    F fn;
    std::atomic<std::size_t> refs{1};
  };
  state* state_;
};

}  // namespace pools::futures::detail
