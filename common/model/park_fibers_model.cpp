// SPDX-License-Identifier: MIT
// park_fibers_model.cpp — Relacy model of the fiber pool's parking: sleepers_, the seq_cst fences
// of notify_one_if_sleeping() and work_visible(), and park_mutex_/park_cv_.
//
// The work-stealing deques are the real pools::chase_lev_deque, instantiated with Relacy's
// atomics (as in deque_model.cpp). The scheduler (variants/fibers/src/scheduler.cpp) uses
// std::atomic and std::mutex directly, so it is transcribed: each step names the line of the real
// code it mirrors, with the same operation and the same memory order (paths as of this model, in
// variants/fibers/src/):
//
//   submit() from a worker  deque push; notify_one_if_sleeping()          scheduler.cpp:164-181
//   inject() from outside   under inject_mutex_: push, size mirror         scheduler.cpp:211-246
//                           (relaxed), notify_one_if_sleeping()
//   notify_one_if_sleeping  seq_cst fence; sleepers_ (seq_cst) > 0 ->      scheduler.cpp:256-283
//                           lock and unlock park_mutex_, notify_one
//   pop_injected()          relaxed size hint; lock; take one and a share  scheduler.cpp:285-312
//                           onto this worker's deque
//   steal()                 the other worker's deque, once                 scheduler.cpp:314-334
//   find_work()             own deque, injection queue, steal              scheduler.cpp:348-384
//   worker_main()           find_work, spin, park                          scheduler.cpp:533-559
//   park()                  under park_mutex_: shut_down_?; sleepers_ +1   scheduler.cpp:614-646
//                           (seq_cst); !work_visible() -> wait once;
//                           sleepers_ -1 (relaxed)
//   work_visible()          seq_cst fence; injected_size_ (seq_cst);       scheduler.cpp:386-396
//                           every deque's looks_empty() (relaxed)
//   shutdown()              under park_mutex_: shut_down_ = true;          scheduler.cpp:130-137
//                           notify_all
//
// Reduced: two workers (and one, see below), tasks only (no fiber switching: a task runs to its end on the
// worker), no park hook, no timers, no I/O-ready FIFO, no fairness tick, no joinable/claimed tasks, one spin
// round instead of 32. shutdown()'s quiescence loop (created/completed counters polled with a
// 1 ms timed wait, scheduler.cpp:105-129) is replaced by the harness (park_support.hpp): the
// poster waits until every task ran, then runs shutdown()'s last step, which wakes the workers.
//
// Scenario: an outside thread (thread 0) injects tasks 1 and 2; task 1, run by a worker, submits
// task 3 onto that worker's deque. Run with two workers (random schedules) and with one (every
// schedule with at most two preemptions, exhaustively). Checked: no lost wake-up (a posted task always runs:
// otherwise Relacy reports a DEADLOCK, the poster and every worker waiting forever), each task runs exactly
// once, the workers exit.
//
// Mutants (POOLS_PARK_MUTANT); Relacy must report each:
//   1  notify_one_if_sleeping() without its seq_cst fence (scheduler.cpp:257). The submitter's
//      store (injected_size_, relaxed) and its load of sleepers_ are then not ordered: it can miss
//      a worker that parked, while that worker's re-check misses the task. A lost wake-up in C++
//      too, not only in Relacy.
//   2  notify_one_if_sleeping() notifies without taking park_mutex_ (scheduler.cpp:261, 279).
//      The notify can then fall between a parking worker's re-check and its wait, and is lost.
//      Only the one-worker pool deadlocks on it: with two, the notify_one reaches the other
//      worker if it waits, and if it does not, that worker is awake and parks later, with a
//      fence ordered after the submitter's, so it sees the task.
// Not a mutant: dropping work_visible()'s fence (scheduler.cpp:390). For the injection queue it is
// not needed in C++, because sleepers_'s increment and the read of injected_size_ are both seq_cst
// (together with the submitter's fence they forbid the lost wake-up); it is needed for the deques'
// relaxed looks_empty() reads, but there a missed wake-up only costs parallelism (the pushing
// worker runs its own deque), which a model of progress cannot see. Relacy treats seq_cst loads
// more weakly than C++ and would report it anyway, for the wrong reason.
#include <pools/chase_lev_deque.hpp>

#include <algorithm>
#include <cstdint>

#include "park_support.hpp"

#ifndef POOLS_PARK_MUTANT
#define POOLS_PARK_MUTANT 0
#endif

namespace {

using pools::model::guard;
using pools::model::relacy_atomics;
template <class T>
using atomic = relacy_atomics::atomic<T>;
using deque_t = pools::chase_lev_deque<int, relacy_atomics>;

constexpr bool notify_fences = POOLS_PARK_MUTANT != 1;
constexpr bool notify_locks = POOLS_PARK_MUTANT != 2;

constexpr int tasks = 3;
constexpr int spin_rounds = 1;  // scheduler.cpp: spin_rounds = 32
constexpr int inject_capacity = 4;

void seq_cst_fence() {  // pools::detail::seq_cst_fence()
  relacy_atomics::thread_fence(std::memory_order_seq_cst);
}

template <int Workers>
struct pool {
  static constexpr int workers = Workers;
  deque_t deque[2] = {deque_t(2), deque_t(2)};  // the second is unused with one worker
  rl::mutex inject_mutex;
  rl::var<int> injected[inject_capacity];  // injected_, a FIFO
  rl::var<int> inj_head, inj_tail;
  atomic<std::size_t> injected_size;
  rl::mutex park_mutex;
  pools::model::strict_condvar park_cv;
  atomic<int> sleepers;
  rl::var<bool> shut_down;  // guarded by park_mutex
  pools::model::completion<tasks> done;

  pool() {
    inj_head($) = 0;
    inj_tail($) = 0;
    shut_down($) = false;
  }

  // notify_one_if_sleeping (scheduler.cpp:256-283), without the hook
  void notify_one_if_sleeping() {
    if (notify_fences) seq_cst_fence();
    if (sleepers.load(std::memory_order_seq_cst) > 0) {
      if (notify_locks) {
        park_mutex.lock($);
        park_mutex.unlock($);
      }
      park_cv.notify_one();
    }
  }
  // submit from worker `self` (scheduler.cpp:164-181)
  void submit_local(unsigned self, int task) {
    deque[self].push(task);
    notify_one_if_sleeping();
  }
  // inject (scheduler.cpp:211-246): the notify happens under inject_mutex_
  void inject(int task) {
    guard g(inject_mutex);
    RL_ASSERT(inj_tail($) - inj_head($) < inject_capacity);
    injected[inj_tail($) % inject_capacity]($) = task;
    inj_tail($) = inj_tail($) + 1;
    injected_size.store(static_cast<std::size_t>(inj_tail($) - inj_head($)), std::memory_order_relaxed);
    notify_one_if_sleeping();
  }
  // pop_injected (scheduler.cpp:285-312); 0 is "nothing"
  int pop_injected(unsigned self) {
    if (injected_size.load(std::memory_order_relaxed) == 0) return 0;
    guard g(inject_mutex);
    if (inj_tail($) == inj_head($)) return 0;
    const int item = injected[inj_head($) % inject_capacity]($);
    inj_head($) = inj_head($) + 1;
    const int share = std::min((inj_tail($) - inj_head($)) / workers, 32);
    for (int i = 0; i < share; ++i) {
      deque[self].push(injected[inj_head($) % inject_capacity]($));
      inj_head($) = inj_head($) + 1;
    }
    injected_size.store(static_cast<std::size_t>(inj_tail($) - inj_head($)), std::memory_order_relaxed);
    return item;
  }
  // steal (scheduler.cpp:314-334); with two workers the victim is the other one
  int steal(unsigned self) {
    if (workers == 1) return 0;
    const auto r = deque[1 - self].steal();
    return r.status == pools::steal_status::success ? r.value : 0;
  }
  // find_work (scheduler.cpp:348-384), tasks only
  int find_work(unsigned self) {
    int item = 0;
    if (!deque[self].pop(item)) item = 0;
    if (item == 0) item = pop_injected(self);
    if (item == 0) item = steal(self);
    return item;
  }
  // work_visible (scheduler.cpp:386-396), without timers
  bool work_visible() {
    seq_cst_fence();
    if (injected_size.load(std::memory_order_seq_cst) != 0) return true;
    for (int i = 0; i < workers; ++i) {
      if (!deque[i].looks_empty()) return true;
    }
    return false;
  }
  // park (scheduler.cpp:614-646), without hook and timers
  bool park() {
    guard g(park_mutex);
    if (shut_down($)) return false;
    sleepers.fetch_add(1, std::memory_order_seq_cst);
    if (!work_visible()) park_cv.wait(park_mutex);
    sleepers.fetch_sub(1, std::memory_order_relaxed);
    return !shut_down($);
  }
  // shutdown()'s last step (scheduler.cpp:130-137), after the harness saw every task run
  void shutdown() {
    {
      guard g(park_mutex);
      shut_down($) = true;
    }
    park_cv.notify_all();
  }

  void run(unsigned self, int task) {
    if (task == 1) submit_local(self, 3);
    done.ran(task);
  }
  // worker_main (scheduler.cpp:533-559)
  void worker_main(unsigned self) {
    for (;;) {
      int item = find_work(self);
      for (int round = 0; item == 0 && round < spin_rounds; ++round) item = find_work(self);
      if (item != 0) {
        run(self, item);
        continue;
      }
      if (!park()) break;
    }
  }
};

template <int Workers>
struct fibers_park_test : rl::test_suite<fibers_park_test<Workers>, 1 + Workers> {
  pool<Workers>* p;

  void before() { p = new pool<Workers>; }
  void thread(unsigned index) {
    if (index == 0) {
      p->inject(1);
      p->inject(2);
      p->done.wait_for_all();
      p->shutdown();
      return;
    }
    p->worker_main(index - 1);
  }
  void after() {
    p->done.check_each_ran_once();
    delete p;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const rl::iteration_t iterations = pools::model::iterations_from(argc, argv, 100000);
  const bool two_ok = pools::model::passes<fibers_park_test<2>>(
      "fibers: sleepers_ handshake and park_cv_, 1 outside thread + 2 workers, 3 tasks", iterations);
  // One worker: every schedule with at most 2 preemptions (about 200,000, exhaustively).
  const bool one_ok = pools::model::passes<fibers_park_test<1>>(
      "fibers: the same with a pool of 1 worker, every schedule with <= 2 preemptions", 10000000, 2);
  const bool ok = two_ok && one_ok;
  static const char* const what[] = {"none", "notify_one_if_sleeping() without its seq_cst fence",
                                     "notify_one_if_sleeping() notifies without park_mutex_"};
  return pools::model::verdict("the fiber pool's parking", POOLS_PARK_MUTANT, what[POOLS_PARK_MUTANT], ok);
}
