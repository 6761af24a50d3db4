// SPDX-License-Identifier: MIT
// pools/fibers/detail/runtime.hpp — the scheduler entry points the header templates call.
//
// Everything here is implemented in src/scheduler.cpp. The functions that read the current
// worker are out of line on purpose: a fiber may resume on another thread, and a compiler that
// inlined a thread_local access could reuse the address it computed before the switch (it
// assumes the thread pointer of a function never changes). A call into another translation
// unit re-reads it.
#pragma once

#include <chrono>

namespace pools::fibers::detail {

class scheduler;
struct fiber_record;
struct task_base;

/// The fiber the caller runs on, or nullptr on a plain thread.
fiber_record* current_fiber() noexcept;

/// The scheduler whose worker runs the caller, or nullptr on a plain thread.
scheduler* current_scheduler() noexcept;

/// Queues a new task: on the calling worker's deque when the caller is one of s's fibers,
/// otherwise on s's shared injection queue.
void submit(scheduler& s, task_base* t);

/// Returns once t's result is stored: runs t inline if no one started it yet, otherwise suspends
/// the calling fiber (or blocks the calling thread) until it completes.
void wait_for_task(task_base& t);

/// Gives up the handle's claim on the result; reports the error of an already-finished task.
void detach_task(task_base& t) noexcept;

void yield_fiber();
void sleep_fiber_until(std::chrono::steady_clock::time_point deadline);

}  // namespace pools::fibers::detail
