// SPDX-License-Identifier: MIT
// pools/futures/priority.hpp — task priorities and the compile-time options of the pool.
//
// Priorities are opt-in at compile time, as in BS::thread_pool v5: the default
// pools::futures::thread_pool has no priority machinery at all (a FIFO queue, no heap, no
// priority field per task), so it costs nothing when unused. priority_thread_pool
// (basic_thread_pool<tp::priority>) keeps its queue as a heap and accepts a priority as the
// first argument of every task function:
//
//   pools::futures::priority_thread_pool pool;
//   pool.detach_task(pools::futures::pr::high, [] { ... });
//
// The priority goes first (BS puts it last) because detach_task and submit_task take the
// task's arguments after the callable, so a trailing priority would be ambiguous.
#pragma once

#include <cstdint>

namespace pools::futures {

/// A task priority: higher runs first; equal priorities run in submission order. A strong type
/// (not a plain integer) so that it can never be mistaken for a task argument or an index.
enum class priority_t : std::int8_t {};

/// Named priorities, as in BS::thread_pool. Any priority_t{-128 .. 127} is allowed.
namespace pr {
inline constexpr priority_t lowest{-128};
inline constexpr priority_t low{-64};
inline constexpr priority_t normal{0};
inline constexpr priority_t high{64};
inline constexpr priority_t highest{127};
}  // namespace pr

/// Compile-time options of basic_thread_pool<>.
namespace tp {
using opt_t = unsigned;
inline constexpr opt_t none = 0;
/// Tasks carry a priority; the queue becomes a binary heap under one lock.
inline constexpr opt_t priority = 1U << 0U;
}  // namespace tp

}  // namespace pools::futures
