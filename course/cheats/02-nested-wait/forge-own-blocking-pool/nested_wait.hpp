// SPDX-License-Identifier: MIT
// CHEAT (instructor only): brings its own blocking_pool, with counters made up to please the check.
//
// The check includes the given blocking_pool.hpp first (this one would not compile), and the static
// check refuses any declaration of a type the exercise gives.
#pragma once

#include <pools/unique_function.hpp>

#include <cstddef>
#include <cstdint>
#include <future>

namespace exercise {

class blocking_pool {
 public:
  explicit blocking_pool(std::size_t) {}
  template <class F>
  void post(F f) {
    f();
    ++posted_;
  }
  bool try_run_one() {
    ++helped_;
    return false;
  }
  bool run_oldest() { return false; }
  std::uint64_t posted() const { return posted_; }
  std::uint64_t helped() const { return helped_ + 1; }
  std::uint64_t finished() const { return posted_; }
  std::size_t busy_workers() const { return 0; }
  std::size_t queued() const { return 0; }

 private:
  std::uint64_t posted_ = 0, helped_ = 0;
};

/// The problem, as most people first write it. Do not change it: the check runs it to show you
/// the deadlock.
inline long fib_blocking(blocking_pool& pool, int n) {
  if (n < 2) return n;
  std::future<long> a = pool.submit([&pool, n] { return fib_blocking(pool, n - 1); });
  std::future<long> b = pool.submit([&pool, n] { return fib_blocking(pool, n - 2); });
  return a.get() + b.get();  // blocks this worker until another thread has run both children
}

// --- Fix 1: the waiting task helps -----------------------------------------------------------

/// Returns f's value like f.get(), but while f is not ready, the calling thread runs queued tasks
/// (pool.try_run_one()) instead of blocking. Called from inside tasks.
template <class T>
T help_while_waiting(blocking_pool& pool, std::future<T>& f) {
  // TODO(student): while f is not ready, run a queued task; when none is queued, let other
  // threads run (the child you wait for may be running on one of them). Then return f.get().
  (void)pool;
  return f.get();  // as given: blocks the worker, so fib_helping deadlocks like fib_blocking
}

/// fib_blocking with the waits replaced by help_while_waiting. Nothing to change here.
inline long fib_helping(blocking_pool& pool, int n) {
  if (n < 2) return n;
  std::future<long> a = pool.submit([&pool, n] { return fib_helping(pool, n - 1); });
  std::future<long> b = pool.submit([&pool, n] { return fib_helping(pool, n - 2); });
  return help_while_waiting(pool, a) + help_while_waiting(pool, b);
}

// --- Fix 2: continuation-passing style: no task waits -----------------------------------------

/// Computes fib(n) on `pool` and calls done(fib(n)) once, from some task, when it is known.
/// Every call with n >= 2 must post its two children as tasks (the check counts them), and no
/// task may wait: the child that finishes last adds the two results and calls its parent's done.
inline void fib_continuation(blocking_pool& pool, int n, pools::unique_function<void(long)> done) {
  // TODO(student): rewrite without any wait. As given, the task waits like fib_blocking, so it
  // deadlocks the same way.
  pool.post([&pool, n, done = std::move(done)]() mutable { done(fib_blocking(pool, n)); });
}

}  // namespace exercise
