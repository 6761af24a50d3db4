// SPDX-License-Identifier: MIT
// park_coroutines_model.cpp — Relacy model of the coroutines pool's parking: the idle_ bits,
// `parked` futex words, the `searching_` count that lets a submitter skip the wake-up, and
// wake_hint(); with the draining destructor that waits for the posted tasks and then stops the
// workers.
//
// The work-stealing deques are the real pools::chase_lev_deque, instantiated with Relacy's
// atomics (as in deque_model.cpp). The scheduler itself (variants/coroutines/src/thread_pool.cpp)
// uses std::atomic directly, so it is transcribed: each step names the line of the real code it
// mirrors, with the same operation and the same memory order (paths as of this model: src/ is
// variants/coroutines/src/, include/ is variants/coroutines/include/pools/coroutines/):
//
//   worker_main()   deque, then find_remote (skipped when just woken);     src/thread_pool.cpp:137-211
//                   searching_ + 1 (relaxed), spin, searching_ - 1
//                   (relaxed): if found and it was the last searcher,
//                   wake_searcher(); else park(last_searcher)
//   park()          parked = 1 (relaxed); set_idle (fetch_or release);     src/thread_pool.cpp:291-343
//                   seq_cst fence; find_remote -> clear_idle: if a waker    set_idle :345-348
//                   chose us, wake_searcher(), else if last searcher, any   clear_idle :350-355
//                   idle and work visible, wake_one(); stopping_ (relaxed);
//                   while parked (acquire) == 1: futex_wait; clear_idle
//                   (fetch_and acq_rel): bit already clear -> woken
//   take_injected() the queue's relaxed hint; head lock, pushed_ acquire,  src/thread_pool.cpp:244-263
//                   take a batch, popped_ release (the rest to this         two_lock_queue.hpp:113-134
//                   worker's deque, then wake_for_new_work)
//   steal()         the other worker's deque, a lost race retried once     src/thread_pool.cpp:265-284
//   inject()        tail lock, write the slot, pushed_ + 1 (seq_cst);      src/thread_pool.cpp:454-460
//                   wake_for_new_work                                      two_lock_queue.hpp:74-81
//   wake_for_new_work() seq_cst fence; searching_ (relaxed) == 0 ->        src/thread_pool.cpp:387-394
//                   wake_one()
//   wake_searcher() seq_cst fence; idle_ (relaxed) != 0 and work visible   src/thread_pool.cpp:396-426
//                   (queue hint, deques: relaxed) -> wake_one()
//   wake_one()      idle_ relaxed guess; CAS weak (acq_rel / relaxed);     src/thread_pool.cpp:357-385
//                   parked = 0 (release); futex_wake
//   wake_all()      seq_cst fence; wake_one() until none                    src/thread_pool.cpp:428-433
//   post()          started + 1 (relaxed: the worker's own count, or      include/thread_pool.hpp:113-118,
//                   started_outside_); then push_local on a worker           211-229, 164-174
//                   (deque push, wake_hint), else inject
//   wake_hint()     searching_ (relaxed) != 0 -> none; idle_ (relaxed)      include/thread_pool.hpp:273-283
//   task_finished() the finishing worker's `finished` + 1 (seq_cst RMW);    src/thread_pool.cpp:106-119
//                   draining_ (seq_cst) -> notify under drain_mutex_
//   all_finished()  the finished counts, then the started ones (seq_cst);  src/thread_pool.cpp:121-135
//                   equal sums
//   ~thread_pool()  draining_ = true (seq_cst); wait all_finished();       src/thread_pool.cpp:82-104
//                   stopping_ = true (seq_cst); wake_all()
//                   (its wait for submitters_ is not modelled: the model's
//                   submitter is the destroying thread itself)
//
// The futex (pools/futex.hpp, common/src/futex_linux.cpp) is replaced by what it guarantees: per worker a
// mutex and a condition variable that never wakes spuriously; futex_wait locks, sleeps only if the
// word still holds the expected value, futex_wake locks and notifies. Like FUTEX_WAIT, the check
// and the sleep are atomic with respect to the wake. The kernel's own memory barriers are left
// out, so the model does not lean on them.
// Reduced: two workers, no park hook, no timers, no I/O-ready FIFO, no fairness tick (61
// completions), one spin round instead of 64 (a spin only repeats find_remote).
//
// Scenario 1: an outside thread (thread 0) posts tasks 1 and 2 (through the injection queue),
// then runs the destructor. Task 1, run by a worker, posts task 3 (onto that worker's deque, with
// wake_hint). Checked: no lost wake-up (a posted task always runs, and the destructor returns:
// otherwise Relacy reports a DEADLOCK, every worker asleep and the destructor waiting), each task
// runs exactly once, every one of them before the drain returns, and the workers exit.
// Scenario 2, the searching hole (a searcher that finds other work wakes no replacement): the
// same posts, but task 1 runs until task 2 has run (it waits on a condition variable). A worker
// that takes task 1 is busy for good, so task 2 must reach the other worker: a schedule in which
// it sits in a queue while that worker sleeps is a DEADLOCK. That happens when the submitter of
// task 2 skips its wake because a worker searches, and that searcher takes task 1 instead and
// wakes nobody.
//
// Mutants (POOLS_PARK_MUTANT); Relacy must report each. 1-4 and 7 are store-buffering handshakes
// with one side's fence gone, which C++ allows to let both sides read the old values:
//   1  park() without its seq_cst fence          (src/thread_pool.cpp:297): a worker sleeps
//      through an injected task whose submitter saw no idle bit
//   2  wake_for_new_work() without its seq_cst fence (src/thread_pool.cpp:389): the same, from
//      the submitter's side (its reads of searching_ and idle_ go stale)
//   3  wake_all() without its seq_cst fence      (src/thread_pool.cpp:430): the destructor's stop
//      is missed by a parking worker whose idle bit it did not see; the join never returns
//   4  task_finished() reads draining_ relaxed   (src/thread_pool.cpp:115): the last task's
//      notify is skipped while the destructor waits for it
//   5  the last searcher to find work wakes no one (src/thread_pool.cpp:187-194, park()'s
//      found_work branch): scenario 2 deadlocks, task 2 queued behind the searcher's task 1
//   6  a batch from the injection queue announces its extra items with the fence-free wake_hint()
//      (src/thread_pool.cpp:261): task 2, moved onto the busy worker's deque, is missed by the
//      other worker's last look and the busy worker's stale read of the idle bits
//   7  wake_searcher() without its seq_cst fence (src/thread_pool.cpp:403): the last searcher's
//      read of the idle bits goes stale, as in 2
//   8  the injection queue's head reads pushed_ relaxed (two_lock_queue.hpp:122): a worker
//      reads a slot the poster's store of pushed_ did not publish to it, a data race
//   9  all_finished() sums the started counts before the finished ones (src/thread_pool.cpp:121-135):
//      task 1 starts task 3 and finishes between the two sums, so its finish is counted and task
//      3's start is not; the sums agree while task 3 waits in a deque, and the drain stops the
//      workers before it runs
#include <pools/chase_lev_deque.hpp>

#include <algorithm>
#include <bit>
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

constexpr bool park_fences = POOLS_PARK_MUTANT != 1;
constexpr bool inject_fences = POOLS_PARK_MUTANT != 2;
constexpr bool wake_all_fences = POOLS_PARK_MUTANT != 3;
constexpr std::memory_order finisher_reads_draining =
    POOLS_PARK_MUTANT == 4 ? std::memory_order_relaxed : std::memory_order_seq_cst;
constexpr bool searcher_passes_on = POOLS_PARK_MUTANT != 5;
constexpr bool batch_wake_fenced = POOLS_PARK_MUTANT != 6;
constexpr bool searcher_fences = POOLS_PARK_MUTANT != 7;
constexpr std::memory_order head_reads_pushed =
    POOLS_PARK_MUTANT == 8 ? std::memory_order_relaxed : std::memory_order_acquire;
constexpr bool drain_sums_finished_first = POOLS_PARK_MUTANT != 9;

constexpr int workers = 2;
constexpr int spin_rounds = 1;  // src/thread_pool.cpp: spin_rounds = 64
constexpr int inject_capacity = 4;
constexpr std::size_t no_worker = ~std::size_t{0};

void seq_cst_fence() {  // pools::detail::seq_cst_fence()
  relacy_atomics::thread_fence(std::memory_order_seq_cst);
}

struct worker {  // include/detail/worker.hpp
  deque_t deque{2};
  atomic<std::uint32_t> parked;   // the futex word
  atomic<std::int64_t> started;   // detached tasks this worker started; only it writes
  atomic<std::int64_t> finished;  // ... and finished
  rl::mutex futex_mutex;          // the futex, see the header comment
  pools::model::strict_condvar futex_cv;
};

enum class park_result { found_work, woken, returned, stop };

// Scenario 1: task 1 posts task 3 from its worker. Scenario 2 (the searching hole): task 1 blocks
// until task 2 has run, so task 2 must not wait for a worker that runs task 1 while the other one
// sleeps.
template <int Scenario>
struct pool {
  static constexpr int tasks = Scenario == 1 ? 3 : 2;
  worker w[workers];
  atomic<std::uint64_t> idle;  // idle_[0]
  atomic<std::uint32_t> searching;
  // injected_, a pools::two_lock_queue<void*> (common/include/pools/two_lock_queue.hpp), its
  // segments reduced to one ring of slots that is never reused (at most two tasks are injected).
  rl::mutex tail_mutex;                 // tail_.mutex (a spin lock: acquire on lock, release on unlock)
  rl::var<int> slots[inject_capacity];  // written under the tail lock, read under the head lock
  rl::var<int> tail_index;              // tail_.index, under the tail lock
  atomic<std::uint64_t> pushed;         // pushed_
  rl::mutex head_mutex;                 // head_.mutex
  atomic<std::uint64_t> popped;         // head_.popped
  atomic<std::uint64_t> known_pushed;   // head_.known_pushed
  atomic<std::int64_t> started_outside, finished_outside;
  atomic<bool> draining, stopping;
  rl::mutex drain_mutex;
  pools::model::strict_condvar drain_cv;
  pools::model::completion<tasks> done;
  rl::mutex task_mutex;  // scenario 2: task 1 waits here until task 2 has run
  pools::model::strict_condvar task_cv;
  rl::var<bool> task2_ran;

  pool() {
    tail_index($) = 0;
    task2_ran($) = false;
  }

  // futex_wait / futex_wake (common/src/futex_linux.cpp), see the header comment.
  void futex_wait(worker& v, std::uint32_t expected) {
    guard g(v.futex_mutex);
    if (v.parked.load(std::memory_order_relaxed) == expected) v.futex_cv.wait(v.futex_mutex);
  }
  void futex_wake(worker& v) {
    guard g(v.futex_mutex);
    v.futex_cv.notify_one();
  }

  // take_injected (src/thread_pool.cpp:244-263), with two_lock_queue::try_pop_batch (:113-134)
  bool take_injected(unsigned self, int& out) {
    const std::uint64_t seen = popped.load(std::memory_order_relaxed);  // maybe_nonempty_hint()
    if (seen == known_pushed.load(std::memory_order_relaxed) &&
        seen == pushed.load(std::memory_order_relaxed))
      return false;
    constexpr int max_batch = 32;
    int batch[inject_capacity] = {};
    int n = 0;
    {
      guard g(head_mutex);
      const std::uint64_t p = popped.load(std::memory_order_relaxed);
      const std::uint64_t last = pushed.load(head_reads_pushed);
      known_pushed.store(last, std::memory_order_relaxed);
      const int queued = static_cast<int>(last - p);
      if (queued == 0) return false;
      n = std::min({queued, 1 + queued / workers, max_batch});
      for (int i = 0; i < n; ++i) batch[i] = slots[(p + static_cast<std::uint64_t>(i)) % inject_capacity]($);
      popped.store(p + static_cast<std::uint64_t>(n), std::memory_order_release);
    }
    out = batch[0];
    for (int i = n; i-- > 1;) w[self].deque.push(batch[i]);
    if (n > 1) {
      if (batch_wake_fenced)
        wake_for_new_work();
      else
        wake_hint();
    }
    return true;
  }
  // steal (src/thread_pool.cpp:265-284); with two workers the victim is the other one.
  bool steal(unsigned self, int& out) {
    const unsigned v = 1 - self;
    for (int attempt = 0; attempt < 2; ++attempt) {
      const auto r = w[v].deque.steal();
      if (r.status == pools::steal_status::success) {
        out = r.value;
        return true;
      }
      if (r.status == pools::steal_status::empty) break;
    }
    return false;
  }
  // find_remote (src/thread_pool.cpp:220-222), without timers
  bool find_remote(unsigned self, int& out) { return take_injected(self, out) || steal(self, out); }

  void set_idle(unsigned i) { idle.fetch_or(std::uint64_t{1} << i, std::memory_order_release); }
  bool clear_idle(unsigned i) {
    const std::uint64_t bit = std::uint64_t{1} << i;
    return (idle.fetch_and(~bit, std::memory_order_acq_rel) & bit) != 0;
  }

  // park, without timers and hook
  park_result park(unsigned self, int& out, bool last_searcher) {
    worker& me = w[self];
    me.parked.store(1, std::memory_order_relaxed);
    set_idle(self);
    if (park_fences) seq_cst_fence();
    if (find_remote(self, out)) {
      if (!clear_idle(self)) {
        if (searcher_passes_on) wake_searcher();  // chosen by a waker, found other work
      } else if (last_searcher && searcher_passes_on && any_idle() && work_visible()) {
        wake_one();  // the last searcher; the fence above follows its decrement
      }
      return park_result::found_work;
    }
    if (stopping.load(std::memory_order_relaxed)) {
      clear_idle(self);
      return park_result::stop;
    }
    for (;;) {
      if (me.parked.load(std::memory_order_acquire) == 0) break;
      futex_wait(me, 1);
    }
    return clear_idle(self) ? park_result::returned : park_result::woken;
  }

  // wake_one (src/thread_pool.cpp:357-385)
  bool wake_one(std::size_t skip = no_worker) {
    const std::uint64_t mask = ~(skip != no_worker ? std::uint64_t{1} << skip : 0);
    std::uint64_t bits = idle.load(std::memory_order_relaxed);
    while ((bits & mask) != 0) {
      const std::uint64_t candidates = bits & mask;
      const std::uint64_t bit = candidates & (~candidates + 1);
      if (idle.compare_exchange_weak(bits, bits & ~bit, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
        worker& v = w[std::countr_zero(bit)];
        v.parked.store(0, std::memory_order_release);
        futex_wake(v);
        return true;
      }
    }
    return false;
  }
  // wake_for_new_work: after publishing work for others
  void wake_for_new_work() {
    if (inject_fences) seq_cst_fence();
    if (searching.load(std::memory_order_relaxed) == 0) wake_one();
  }
  // wake_searcher: the last searcher found work, or a chosen worker found other work
  void wake_searcher() {
    if (searcher_fences) seq_cst_fence();
    if (any_idle() && work_visible()) wake_one();
  }
  bool any_idle() { return idle.load(std::memory_order_relaxed) != 0; }
  // work_visible, without timers
  bool work_visible() {
    if (pushed.load(std::memory_order_relaxed) != popped.load(std::memory_order_relaxed)) return true;
    for (auto& v : w) {
      if (!v.deque.looks_empty()) return true;
    }
    return false;
  }
  // wake_all
  void wake_all() {
    if (wake_all_fences) seq_cst_fence();
    while (wake_one()) {
    }
  }
  // wake_hint (include/thread_pool.hpp:273-283)
  void wake_hint() {
    if (searching.load(std::memory_order_relaxed) != 0) return;
    if (idle.load(std::memory_order_relaxed) != 0) wake_one();
  }
  // inject (src/thread_pool.cpp:454-460), with two_lock_queue::push (two_lock_queue.hpp:74-81)
  void inject(int task) {
    {
      guard g(tail_mutex);
      RL_ASSERT(tail_index($) < inject_capacity);
      slots[tail_index($)]($) = task;
      tail_index($) = tail_index($) + 1;
      pushed.store(pushed.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
    }
    wake_for_new_work();
  }
  // post from outside: started_outside_ + 1, start_counted() -> inject (include/thread_pool.hpp:113-118,
  // 211-229)
  void post_outside(int task) {
    started_outside.fetch_add(1, std::memory_order_relaxed);
    inject(task);
  }
  // post from worker `self`: its own started + 1, start() -> push_local
  // (include/thread_pool.hpp:164-174), not in a hook
  void post_local(unsigned self, int task) {
    w[self].started.store(w[self].started.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    w[self].deque.push(task);
    wake_hint();
  }
  // task_finished (src/thread_pool.cpp:106-119), on worker `self`
  void task_finished(unsigned self) {
    w[self].finished.fetch_add(1, std::memory_order_seq_cst);
    if (draining.load(finisher_reads_draining)) {
      guard g(drain_mutex);
      drain_cv.notify_all();
    }
  }
  std::int64_t sum_finished() {
    std::int64_t n = finished_outside.load(std::memory_order_seq_cst);
    for (auto& v : w) n += v.finished.load(std::memory_order_seq_cst);
    return n;
  }
  std::int64_t sum_started() {
    std::int64_t n = started_outside.load(std::memory_order_seq_cst);
    for (auto& v : w) n += v.started.load(std::memory_order_seq_cst);
    return n;
  }
  // all_finished (src/thread_pool.cpp:121-135)
  bool all_finished() {
    if (drain_sums_finished_first) {
      const std::int64_t finished = sum_finished();
      return finished == sum_started();
    }
    const std::int64_t started = sum_started();
    return sum_finished() == started;
  }
  // ~thread_pool (src/thread_pool.cpp:82-104), without the join (the Relacy threads end)
  void destroy() {
    draining.store(true, std::memory_order_seq_cst);
    {
      guard g(drain_mutex);
      while (!all_finished()) drain_cv.wait(drain_mutex);
    }
    // The drain's promise: every task, and every task they started, has finished by now (the
    // loads above synchronise with the finishers' increments, so these reads see their runs).
    done.check_each_ran_once();
    stopping.store(true, std::memory_order_seq_cst);
    wake_all();
  }

  void run(unsigned self, int task) {
    if (Scenario == 1 && task == 1) post_local(self, 3);
    if (Scenario == 2 && task == 1) {  // runs until task 2 has run: the other worker must do it
      guard g(task_mutex);
      while (!task2_ran($)) task_cv.wait(task_mutex);
    }
    if (Scenario == 2 && task == 2) {
      guard g(task_mutex);
      task2_ran($) = true;
      task_cv.notify_all();
    }
    done.ran(task);
    task_finished(self);
  }

  // worker_main (src/thread_pool.cpp:137-211), without hook and fairness tick
  void worker_main(unsigned self) {
    int h = 0;
    bool woken = false;  // chosen by a waker: starts as a searcher
    for (;;) {
      if (!woken && (w[self].deque.pop(h) || find_remote(self, h))) {
        run(self, h);
        continue;
      }
      woken = false;
      searching.fetch_add(1, std::memory_order_relaxed);
      bool found = false;
      for (int round = 0; round < spin_rounds && !found; ++round) found = find_remote(self, h);
      const bool last_searcher = searching.fetch_sub(1, std::memory_order_relaxed) == 1;
      if (found) {
        if (last_searcher && searcher_passes_on) wake_searcher();
        run(self, h);
        continue;
      }
      switch (park(self, h, last_searcher)) {
        case park_result::found_work:
          run(self, h);
          break;
        case park_result::woken:
          woken = true;
          break;
        case park_result::returned:
          break;
        case park_result::stop:
          return;
      }
    }
  }
};

struct coroutines_park_test : rl::test_suite<coroutines_park_test, 1 + workers> {
  pool<1>* p;

  void before() { p = new pool<1>; }
  void thread(unsigned index) {
    if (index == 0) {
      p->post_outside(1);
      p->post_outside(2);
      p->destroy();
      return;
    }
    p->worker_main(index - 1);
  }
  void after() {
    p->done.check_each_ran_once();
    delete p;
  }
};

struct coroutines_searching_test : rl::test_suite<coroutines_searching_test, 1 + workers> {
  pool<2>* p;

  void before() { p = new pool<2>; }
  void thread(unsigned index) {
    if (index == 0) {
      p->post_outside(1);
      p->post_outside(2);
      p->destroy();
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
  const bool ok =
      pools::model::passes<coroutines_park_test>(
          "coroutines: idle bits, parked words, searching_, drain; 1 outside thread + 2 workers, 3 tasks",
          iterations) &&
      pools::model::passes<coroutines_searching_test>(
          "coroutines: the searching hole; task 1 runs until task 2 has run; 1 outside thread + 2 workers",
          iterations);
  static const char* const what[] = {"none",
                                     "park() without its seq_cst fence",
                                     "inject() without its seq_cst fence",
                                     "wake_all() without its seq_cst fence",
                                     "task_finished() reads draining_ relaxed",
                                     "the last searcher to find work wakes no one",
                                     "a batch from the injection queue wakes with the fence-free wake_hint()",
                                     "wake_searcher() without its seq_cst fence",
                                     "the injection queue's head reads pushed_ relaxed",
                                     "all_finished() sums the started counts before the finished ones"};
  return pools::model::verdict("the coroutines pool's parking", POOLS_PARK_MUTANT, what[POOLS_PARK_MUTANT],
                               ok);
}
