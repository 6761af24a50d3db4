// SPDX-License-Identifier: MIT
// nested_wait.hpp — exercise 02-nested-wait, A CHEAT (course/cheats/: instructor-only, left out of
// the hand-out). ctest -R exercise_02-nested-wait_cheat_ proves the check fails it.
//
// fib_blocking() deadlocks: each task blocks its worker in future::get() until a child has run,
// and once every worker waits, the children stay in the queue. The two fixes remove the waiting
// worker from the picture in two different ways:
//   Fix 1: help_while_waiting() — the waiting task keeps its thread busy running queued tasks.
//   Fix 2: fib_continuation()   — no task waits: the last child to finish continues the parent.
#pragma once

#include <pools/unique_function.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "blocking_pool.hpp"

namespace exercise {

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
  // Whatever f waits for is either still queued (then some helper or worker will take it: we may
  // be the one) or running on a thread (then it finishes, by the same argument one level down).
  // So the wait ends; no thread ever sleeps while work it could do is queued.
  while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    // Nothing queued: the child runs on another thread. Yield rather than spin hot, so that a
    // thread preempted on a busy machine gets the core back sooner.
    if (!pool.try_run_one()) std::this_thread::yield();
  }
  return f.get();
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
// THE CHEAT: the tree of tasks is right (two children posted per call), but each parent waits for
// its children's futures on a thread of its own. No pool worker blocks, so the pools of 1, 2 and 4
// threads answer; it is still a wait per call, and a thread per call.
inline void fib_continuation(blocking_pool& pool, int n, pools::unique_function<void(long)> done) {
  if (n < 2) {
    done(n);
    return;
  }
  auto a = std::make_shared<std::promise<long>>();
  auto b = std::make_shared<std::promise<long>>();
  std::thread([fa = a->get_future(), fb = b->get_future(), done = std::move(done)]() mutable {
    done(fa.get() + fb.get());
  }).detach();
  pool.post([&pool, n, a] { fib_continuation(pool, n - 1, [a](long v) { a->set_value(v); }); });
  pool.post([&pool, n, b] { fib_continuation(pool, n - 2, [b](long v) { b->set_value(v); }); });
}

}  // namespace exercise
