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
#include <stop_token>

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

/// The stop token of the task running on the calling fiber, or nullptr: on a plain thread, or in
/// a task started without one (this_fiber.hpp, get_stop_token).
const std::stop_token* current_stop_token() noexcept;

/// Makes `token` the calling fiber's stop token and returns the one it replaces: a task started
/// with spawn(token, f) runs f between two calls (stop_scope, thread_pool.hpp). No effect off a
/// fiber.
const std::stop_token* exchange_stop_token(const std::stop_token* token) noexcept;

/// A cancellation point: throws operation_cancelled when the calling fiber's stop token is
/// stopped; otherwise returns the token a wait that follows should watch (waiter::stop_token),
/// nullptr when none can stop it.
const std::stop_token* cancellation_point();

void yield_fiber();
void sleep_fiber_until(std::chrono::steady_clock::time_point deadline);

}  // namespace pools::fibers::detail
