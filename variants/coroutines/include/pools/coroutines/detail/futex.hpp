// SPDX-License-Identifier: MIT
// pools/coroutines/detail/futex.hpp — the Linux futex: sleep while a 32-bit word holds a value.
//
// Why not std::atomic::wait: it has no timeout, and an idle worker must wake for the earliest
// timer. Why not a condition variable: the parking protocol is already a lock-free handshake on a
// word (thread_pool.cpp); a futex sleeps on exactly that word, and FUTEX_WAIT checks the value
// and sleeps atomically in the kernel, so a wake between the check and the sleep is not lost.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace pools::coroutines::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word must be a plain 32-bit integer");

/// Sleeps while `word == expected`, at most `timeout` (negative: no limit). Returns on a wake,
/// on a value mismatch, on timeout or spuriously: callers re-check their condition.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept;

/// Wakes up to `count` threads sleeping on `word`.
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

}  // namespace pools::coroutines::detail
