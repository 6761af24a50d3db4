// SPDX-License-Identifier: MIT
// pools/fibers/detail/context.hpp — things a worker thread can switch to: fibers and its own stack.
#pragma once

#include <pools/fibers/detail/continuation.hpp>
#include <pools/fibers/stack_pool.hpp>

#include <cstddef>
#include <stop_token>

namespace pools::fibers::detail {

class scheduler;
struct task_base;

/// The per-context copy of the C++ runtime's per-thread exception state (the Itanium ABI's
/// __cxa_eh_globals: the stack of exceptions being handled and the uncaught count). It is
/// swapped on every switch, so a fiber may suspend inside a catch block or a destructor running
/// during unwinding and resume on another thread without corrupting that thread's state.
struct exception_state {
  void* caught = nullptr;
  unsigned int uncaught = 0;
};

/// Something a worker can run on: a fiber, or the worker thread's original stack ("home").
struct context {
  explicit context(bool fiber) noexcept : is_fiber(fiber) {}
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  continuation cont;  // holds the saved registers while this context is switched out
  exception_state eh;
  const bool is_fiber;
#if defined(POOLS_ASAN)
  // ASan must be told the bounds of the stack being switched to, and keeps a "fake stack" per
  // context for use-after-return detection.
  void* asan_fake_stack = nullptr;
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
#endif
#if defined(POOLS_TSAN)
  void* tsan_fiber = nullptr;  // TSan's per-context state (shadow call stack, vector clock)
#endif
};

/// A fiber: a context with its own stack. The record lives at the top of the stack it describes,
/// so a fiber costs no heap allocation and its bookkeeping shares a page with its first frames.
struct fiber_record final : context {
  fiber_record(scheduler& s, const stack_pool::stack& st) noexcept : context(true), owner(&s), stack(st) {}

  scheduler* owner;
  stack_pool::stack stack;
  task_base* first_task = nullptr;  // handed over when the fiber is taken to run a task
  fiber_record* next_idle = nullptr;
  // The link of the scheduler's overflow queue: a woken fiber that could not be queued because
  // a queue could not grow (out of memory) waits there, on a list that allocates nothing.
  fiber_record* next_overflow = nullptr;
  bool exit_requested = false;  // set at shutdown: leave the loop and end
  // The stop token of the task running on this fiber (this_fiber::get_stop_token()), or nullptr:
  // it lives in that task (spawn(token, f)). Per fiber, not per thread: a suspended task keeps
  // it when it resumes elsewhere. A task run inline by a joiner swaps it for its own
  // (parking.cpp, run_inline), and between tasks it is nullptr.
  const std::stop_token* stop_token = nullptr;
};

}  // namespace pools::fibers::detail
