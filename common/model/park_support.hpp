// SPDX-License-Identifier: MIT
// park_support.hpp — what the three parking models (park_*_model.cpp) share: a lock guard for
// Relacy's mutex, the harness that counts finished tasks, and the run-and-report main() (which
// fork_join_model.cpp uses too).
//
// The harness is not part of any pool: it is how a model turns "a lost wake-up" into something
// Relacy reports. The thread that posts the tasks waits (on the harness's own mutex and condition
// variable, correct by construction) until every task has run, and only then shuts the pool down.
// If a wake-up is lost, a task stays queued while every worker sleeps: no thread can make
// progress, and Relacy reports a DEADLOCK for that schedule.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "relacy_atomics.hpp"

namespace pools::model {

// std::lock_guard for rl::mutex (whose lock() and unlock() take a debug_info).
class guard {
 public:
  explicit guard(rl::mutex& m) : m_(m) { m_.lock($); }
  ~guard() { m_.unlock($); }

 private:
  guard(const guard&);  // not copyable (no `= delete`: Relacy defines `delete` as a macro)
  guard& operator=(const guard&);
  rl::mutex& m_;
};

// A condition variable that never wakes up spuriously. Relacy's std::condition_variable does
// (up to 10 times per run, when every thread is blocked), and a spurious wake-up lets a sleeping
// worker find the task whose wake-up was lost: the deadlock a lost wake-up causes would be hidden
// in exactly the schedules that matter. The pools re-check their condition after every wake-up,
// so they do not rely on spurious wake-ups either; without them the model checks the stronger
// property. (The same stands in for the futex in the coroutines model.)
struct strict_condvar_tag;
class strict_condvar : rl::condvar<strict_condvar_tag> {
 public:
  strict_condvar() { init(false, $); }
  ~strict_condvar() { deinit($); }
  void notify_one() { rl::condvar<strict_condvar_tag>::notify_one($); }
  void notify_all() { rl::condvar<strict_condvar_tag>::notify_all($); }
  void wait(rl::mutex& m) { rl::condvar<strict_condvar_tag>::wait(m, false, $); }

 private:
  strict_condvar(const strict_condvar&);
  strict_condvar& operator=(const strict_condvar&);
};

// Counts how often each task ran; the poster waits until all of them have. The counters are
// relaxed read-modify-writes, and only the worker that finishes the last task takes the mutex:
// the harness adds no happens-before edge between workers, which could hide a missing one in the
// pool.
template <int Tasks>
class completion {
 public:
  // A worker ran task `id` (1..Tasks).
  void ran(int id) {
    RL_ASSERT(id >= 1 && id <= Tasks);
    runs_[id].fetch_add(1, std::memory_order_relaxed);
    if (done_.fetch_add(1, std::memory_order_relaxed) + 1 == Tasks) {
      guard g(m_);
      cv_.notify_all();
    }
  }
  // Blocks until every task has run. A task never run leaves this thread blocked: DEADLOCK.
  void wait_for_all() {
    m_.lock($);
    while (done_.load(std::memory_order_relaxed) < Tasks) cv_.wait(m_);
    m_.unlock($);
  }
  // After every thread ended: each task ran exactly once.
  void check_each_ran_once() {
    for (int i = 1; i <= Tasks; ++i) RL_ASSERT(runs_[i].load(std::memory_order_relaxed) == 1);
  }

 private:
  rl::mutex m_;
  strict_condvar cv_;
  relacy_atomics::atomic<int> runs_[Tasks + 1];
  relacy_atomics::atomic<int> done_;
};

// Runs one scenario for `iterations` random schedules; true when Relacy found nothing.
// context_bound > 0 instead explores every schedule with at most that many preemptions (Relacy's
// context-bound scheduler; `iterations` is then only a cap).
template <class Test>
bool passes(const char* name, rl::iteration_t iterations, unsigned context_bound = 0) {
  rl::test_params params;
  params.iteration_count = iterations;
  params.search_type = context_bound == 0 ? rl::random_scheduler_type : rl::fair_context_bound_scheduler_type;
  if (context_bound != 0) params.context_bound = context_bound;
  // Each schedule is a few hundred scheduling points; the default limit (2000) could be reached
  // by a long but legal schedule with spurious wake-ups and be misreported as a livelock.
  params.execution_depth_limit = 20000;
  std::printf("--- %s: %llu random schedules\n", name, static_cast<unsigned long long>(iterations));
  std::fflush(stdout);
  return rl::simulate<Test>(params);
}

// The iteration count: the default, or the first command-line argument.
inline rl::iteration_t iterations_from(int argc, char** argv, rl::iteration_t fallback) {
  return argc > 1 ? std::strtoull(argv[1], nullptr, 10) : fallback;
}

// main()'s verdict. mutant == 0: exit 0 when every schedule passed. A mutant: exit 0 only when
// Relacy reported a failure, so a model that stopped seeing the order it is about fails CI.
inline int verdict(const char* model, int mutant, const char* mutant_what, bool all_ok) {
  if (mutant == 0) {
    std::printf(all_ok ? "model: %s passed every schedule\n" : "model: Relacy found a bug in %s\n", model);
    return all_ok ? 0 : 1;
  }
  std::printf(all_ok ? "model: %s mutant %d (%s) NOT caught: the model cannot see this order\n"
                     : "model: %s mutant %d (%s) caught, as it must be\n",
              model, mutant, mutant_what);
  return all_ok ? 1 : 0;
}

}  // namespace pools::model
