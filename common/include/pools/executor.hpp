// SPDX-License-Identifier: MIT
// pools/executor.hpp — the one concept every pool in this repository satisfies.
//
// The contract (tested for every registered type by common/conformance/conformance.cpp):
//
//  1. ex.post(f) accepts any move-only callable `f` invocable as f() and runs it exactly once on
//     one of the executor's threads. post may be called from any thread, including from inside a
//     task running on the same executor; it never runs f before post was called.
//  2. ex.concurrency() is the most tasks the executor runs at the same time (for a pool: its
//     worker count). It is at least 1.
//  3. Destruction drains: every task posted before the destructor started — and every task those
//     tasks post while the destructor waits — runs before the destructor returns. Nothing that
//     was accepted is dropped silently. (A variant may offer an explicit way to drop queued work,
//     e.g. the futures pool when paused, and documents it.) Posting from a thread that is not a
//     task of the executor once destruction has begun is undefined, as for any destroyed object.
//  4. An exception escaping a posted task is handed to pools::report_unhandled_exception (see
//     pools/unhandled_exception.hpp); the executor keeps running. It never calls std::terminate.
//     Use pools::submit when the caller wants the exception back.
//  5. post synchronises-with the start of the task: everything the posting thread did before
//     post is visible inside the task.
#pragma once

#include <concepts>
#include <cstddef>

namespace pools {

namespace detail {
// A move-only callable: the concept must hold for tasks that own a promise or a unique_ptr.
struct move_only_task_archetype {
  move_only_task_archetype() = default;
  move_only_task_archetype(move_only_task_archetype&&) = default;
  move_only_task_archetype& operator=(move_only_task_archetype&&) = default;
  move_only_task_archetype(const move_only_task_archetype&) = delete;
  move_only_task_archetype& operator=(const move_only_task_archetype&) = delete;
  void operator()() {}
};
}  // namespace detail

template <class E>
concept Executor = requires(E& ex, const E& cex) {
  ex.post(detail::move_only_task_archetype{});
  { cex.concurrency() } -> std::convertible_to<std::size_t>;
};

/// Facts about an executor that the concept cannot express. Specialise for a type whose
/// answer differs from the default.
template <class E>
struct executor_traits {
  /// True when tasks run on a fixed set of threads, so at most concurrency() distinct thread ids
  /// ever run tasks. False for executors that start a new thread per task.
  static constexpr bool reuses_threads = true;
  /// True when every task gets an execution context of its own (a thread, or a fiber with its
  /// stack). ThreadSanitizer keeps clock state per context, so the conformance suite scales its
  /// million-task loops down for such executors in TSan builds. An executor says so with a member
  /// `static constexpr bool context_per_task = true;`.
  static constexpr bool context_per_task = requires { requires E::context_per_task; };
};

}  // namespace pools
