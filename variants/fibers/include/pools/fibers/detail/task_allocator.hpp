// SPDX-License-Identifier: MIT
// pools/fibers/detail/task_allocator.hpp — where task objects come from.
//
// A fork-join program allocates a task per spawn and frees it a few hundred nanoseconds later,
// often on another thread (when the task was stolen). glibc's per-thread cache keeps only 7
// blocks per size, so a node that spawns 9 children already falls through to the slower shared
// paths (skynet spent a quarter of its time in malloc/free). Each thread here keeps up to 1024
// freed blocks per 64-byte size class (64..256 bytes) and reuses them; bigger tasks, and blocks
// beyond the cap, go to operator new/delete. Under ASan the cache is bypassed, so that a
// use-after-free of a task is still reported instead of hidden by recycling.
#pragma once

#include <cstddef>

namespace pools::fibers::detail {

void* allocate_task(std::size_t bytes);
void deallocate_task(void* p, std::size_t bytes) noexcept;

}  // namespace pools::fibers::detail
