// SPDX-License-Identifier: MIT
// CHEAT (instructor only): a forged verdict. Before main, a namespace-scope initializer prints
//
// the check's "ok" lines and its PASS line a hundred times, then ends the process with the exit
// status of a pass. The static check refuses the I/O, the exit and the initializer; run anyway, the
// grader scores it 0: the process exited 0 without the check's verdict on the result channel.
#pragma once

#include <pools/unique_function.hpp>

#include <cstdio>
#include <cstdlib>
#include <future>

#include "blocking_pool.hpp"

namespace exercise {

namespace {
struct forged_verdict {
  forged_verdict() {
    for (int i = 0; i < 100; ++i) std::printf("  ok    fix 1: fib_helping is right\n");
    std::printf("PASS: exercise 02-nested-wait\n");
    std::fflush(stdout);
    std::_Exit(0);
  }
};
const forged_verdict forge;
}  // namespace

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
