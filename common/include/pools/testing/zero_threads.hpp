// SPDX-License-Identifier: MIT
// pools/testing/zero_threads.hpp — the check each pool's tests run on a thread count of 0.
//
// A thread count of 0 means one worker per hardware thread in every pool (pools/thread_count.hpp),
// so `pool(std::thread::hardware_concurrency())` behaves the same whichever pool it names.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>

namespace pools::testing {

/// make_pool() returns a pool constructed with 0 threads: it must report one worker per hardware
/// thread (at least 1) and run every task posted to it.
template <class MakePool>
void check_zero_threads_means_every_core(MakePool make_pool) {
  const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
  constexpr int tasks = 64;
  std::atomic<int> ran{0};  // outlives the pool, whose destructor joins its workers
  {
    auto pool = make_pool();
    CHECK(pool.concurrency() == cores);
    for (int i = 0; i < tasks; ++i) pool.post([&ran] { ++ran; });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (ran.load() < tasks && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  }
  CHECK(ran.load() == tasks);
}

}  // namespace pools::testing
