// SPDX-License-Identifier: MIT
// pools/futex.hpp — sleep while a 32-bit word holds a value; wake whoever sleeps on it.
//
// The coroutine pool's parking protocol is a lock-free handshake on one word per worker
// (variants/coroutines/src/thread_pool.cpp): a worker stores parked = 1, re-checks for work, and
// sleeps while the word is still 1; a waker stores 0 and wakes it. The sleep must check the value
// and go to sleep as one step, or a wake between the check and the sleep is lost.
//
// Why not std::atomic::wait: it has no timeout, and an idle worker must wake for the earliest
// timer. Why not one condition variable per worker: the handshake is already on the word, and on
// Linux the kernel can sleep on exactly that word.
//
// Two implementations, one chosen at build time (common/CMakeLists.txt), the same contract:
//   src/futex_linux.cpp     the Linux futex system call: FUTEX_WAIT compares and sleeps in the
//                           kernel, atomically; FUTEX_WAKE wakes. No lock on either side.
//   src/futex_portable.cpp  C++20 only (POOLS_PORTABLE, and every system but Linux): a fixed table
//                           of mutex + condition-variable pairs, the word's address picks one; the
//                           waiter compares under the mutex, the waker passes through the mutex
//                           before it notifies, so the wake cannot fall between compare and sleep.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace pools {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word must be a plain 32-bit integer");

/// Sleeps while `word == expected`, at most `timeout` (negative: no limit). Returns on a wake,
/// on a value mismatch, on timeout or spuriously: callers re-check their condition.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept;

/// Wakes up to `count` threads sleeping on `word` (the portable one may wake more: a spurious
/// wake-up, which futex_wait's callers handle anyway). Call it after changing the word.
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

}  // namespace pools
