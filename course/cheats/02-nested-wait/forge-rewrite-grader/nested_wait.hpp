// SPDX-License-Identifier: MIT
// CHEAT (instructor only): rewrites the grader's results writer before it runs: the
//
// submission runs before the grader turns its output into scores, in the same tree. The static
// check refuses <fstream>; the grader runs from files the submission cannot write (instructor.md,
// "Threat model"). Never run it: it would overwrite course/tools/gradescope_results.py.
#pragma once

#include <pools/unique_function.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "blocking_pool.hpp"

namespace exercise {

namespace {
struct rewrite_grader {
  rewrite_grader() {
    std::ofstream("course/tools/gradescope_results.py")
        << "import json, sys\njson.dump({'score': 100, 'tests': []}, open(sys.argv[3], 'w'))\n";
  }
};
const rewrite_grader forge;
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
inline void fib_continuation(blocking_pool& pool, int n, pools::unique_function<void(long)> done) {
  if (n < 2) {
    done(n);
    return;
  }
  // What the two children share: their results and the parent's continuation. The join counter
  // says which child finishes last; only that one reads both results and calls done.
  struct join {
    std::atomic<int> pending{2};
    long results[2] = {0, 0};
    pools::unique_function<void(long)> done;
  };
  auto shared = std::make_shared<join>();
  shared->done = std::move(done);
  for (int i = 0; i < 2; ++i) {
    pool.post([&pool, n, i, shared] {
      fib_continuation(pool, n - 1 - i, [i, shared](long value) {
        shared->results[i] = value;
        // acq_rel: the first child's release publishes its result; the last child's acquire sees
        // it before adding. Each child writes only its own slot, so nothing else needs ordering.
        if (shared->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          shared->done(shared->results[0] + shared->results[1]);
        }
      });
    });
  }
}

}  // namespace exercise
