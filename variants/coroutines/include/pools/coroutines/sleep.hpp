// SPDX-License-Identifier: MIT
// pools/coroutines/sleep.hpp — suspend a coroutine for a while without holding a worker.
//
//   co_await sleep_for(pool, 10ms);
//   co_await sleep_until(pool, deadline);
//
// The coroutine's handle goes into the pool's timer heap and the worker moves on to other work.
// Workers take due timers when they look for work (and, when busy, every few dozen tasks); a
// parked worker sleeps on its futex with a timeout that ends at the earliest deadline, and adding
// an earlier deadline wakes one. The coroutine resumes on some worker of `pool` at or after the
// deadline (never before). A deadline already passed does not suspend at all.
#pragma once

#include <pools/coroutines/thread_pool.hpp>

#include <chrono>
#include <coroutine>

namespace pools::coroutines {

class sleep_awaiter {
 public:
  sleep_awaiter(thread_pool& pool, std::chrono::steady_clock::time_point deadline) noexcept
      : pool_(&pool), deadline_(deadline) {}
  bool await_ready() const noexcept { return std::chrono::steady_clock::now() >= deadline_; }
  void await_suspend(std::coroutine_handle<> h) const { pool_->add_timer(deadline_, h); }
  void await_resume() const noexcept {}

 private:
  thread_pool* pool_;
  std::chrono::steady_clock::time_point deadline_;
};

/// Resumes the awaiting coroutine on a worker of `pool` at or after `deadline`.
template <class Duration>
sleep_awaiter sleep_until(thread_pool& pool,
                          std::chrono::time_point<std::chrono::steady_clock, Duration> deadline) {
  return {pool, std::chrono::ceil<std::chrono::steady_clock::duration>(deadline)};
}

/// Resumes the awaiting coroutine on a worker of `pool` after at least `delay`.
template <class Rep, class Period>
sleep_awaiter sleep_for(thread_pool& pool, std::chrono::duration<Rep, Period> delay) {
  return {pool,
          std::chrono::steady_clock::now() + std::chrono::ceil<std::chrono::steady_clock::duration>(delay)};
}

}  // namespace pools::coroutines
