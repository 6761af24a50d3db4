// SPDX-License-Identifier: MIT
// park_futures_model.cpp — Relacy model of the tuned futures pool's wake-up protocol: a worker
// announces that it is going to sleep (sleepers_), a poster publishes its task and then decides
// whether to signal (signals_).
//
// A faithful transcription, not the pool itself: basic_thread_pool and two_lock_queue use
// std::atomic, std::mutex and pools::spinlock directly and cannot be instantiated with Relacy's
// types. Each step below names the line of the real code it mirrors, with the same operation and
// the same memory order (paths as of this model: variants/futures/include/pools/futures/, and
// common/include/pools/ for two_lock_queue.hpp):
//
//   poster  enqueue()                   thread_pool.hpp:508-520
//     push: tail lock, write the slot,  two_lock_queue.hpp:74-81; pushed_ store seq_cst :80
//       pushed_ + 1
//     sleepers_.load(seq_cst) != 0      thread_pool.hpp:518 (and hold_ relaxed == 0)
//     wake_one(): under sleep_mutex_,   thread_pool.hpp:522-531
//       sleepers_ - 1, signals_ + 1, notify_one
//   worker  worker_main()               thread_pool.hpp:586-612
//     try_pop: hint (relaxed), head     two_lock_queue.hpp:88-107, 226-230
//       lock, pushed_ acquire, admit, popped_ release
//     wait_for_work(): spin on the      thread_pool.hpp:554-563
//       relaxed hint
//     under sleep_mutex_: sleepers_     thread_pool.hpp:564-565
//       .fetch_add(1, seq_cst)
//     while (!work_visible() && !stop   thread_pool.hpp:566-575; work_visible :542-544
//       && signals_ == 0) wait            (hold_ seq_cst, pushed_ seq_cst: two_lock_queue.hpp:145-147)
//     take one signal back, else one    thread_pool.hpp:576-580
//       sleeper; return !may_exit()     may_exit :548-551
//   shutdown stop_workers()             thread_pool.hpp:648-657
//
// Reduced: one segment (no growth or recycling), no priorities, no pause()/reset() (hold_ stays 0
// but is read where the real code reads it), no wait() bookkeeping (running flags, waiters_), one
// spin round instead of 64 + 16 (a spin only polls the same relaxed hint).
//
// Scenario: the poster (thread 0) posts tasks 1 and 2; task 1, run by a worker, posts task 3 (so a
// worker is a poster too). Two workers. The poster waits until all three ran (park_support.hpp),
// then stops the pool. Checked: no lost wake-up (a posted task is always run: otherwise Relacy
// reports a DEADLOCK, as the poster and every worker wait forever), each task runs exactly once,
// no data race on a slot (the payloads are rl::var: reading one that is not yet published is a
// race Relacy reports), and the workers exit.
//
// The protocol is a store-buffering handshake made of seq_cst operations only: "publish my task,
// then read sleepers_" against "increment sleepers_, then read pushed_". Each mutant weakens one of
// its four accesses below seq_cst, which C++ allows to let both sides read the old value:
//   POOLS_PARK_MUTANT=1  enqueue() reads sleepers_ relaxed           (thread_pool.hpp:518)
//   POOLS_PARK_MUTANT=2  push() publishes pushed_ with release       (two_lock_queue.hpp:80)
//   POOLS_PARK_MUTANT=3  the worker announces itself relaxed         (thread_pool.hpp:565)
//   POOLS_PARK_MUTANT=4  work_visible() reads pushed_ with acquire   (two_lock_queue.hpp:146)
// Each must be reported by Relacy (a deadlock: a task queued, every worker asleep).
#include <cstdint>

#include "park_support.hpp"

#ifndef POOLS_PARK_MUTANT
#define POOLS_PARK_MUTANT 0
#endif

namespace {

using pools::model::guard;
template <class T>
using atomic = pools::model::relacy_atomics::atomic<T>;

constexpr std::memory_order order_if(int mutant, std::memory_order weakened) {
  return POOLS_PARK_MUTANT == mutant ? weakened : std::memory_order_seq_cst;
}
constexpr std::memory_order poster_reads_sleepers = order_if(1, std::memory_order_relaxed);
constexpr std::memory_order push_publishes = order_if(2, std::memory_order_release);
constexpr std::memory_order worker_announces = order_if(3, std::memory_order_relaxed);
constexpr std::memory_order worker_reads_pushed = order_if(4, std::memory_order_acquire);

constexpr int tasks = 3;
constexpr int capacity = 4;     // slots of the one segment
constexpr int spin_rounds = 1;  // thread_pool.hpp: spin_pause_rounds + spin_yield_rounds

struct pool {
  // ---- two_lock_queue ----
  rl::mutex tail_mutex;  // tail_.mutex (a spin lock: acquire on lock, release on unlock)
  rl::var<int> tail_index;
  rl::var<int> slots[capacity];  // the tasks' payloads
  atomic<std::uint64_t> pushed;  // pushed_
  rl::mutex head_mutex;          // head_.mutex
  rl::var<int> head_index;
  atomic<std::uint64_t> popped;        // head_.popped
  atomic<std::uint64_t> known_pushed;  // head_.known_pushed
  // ---- basic_thread_pool ----
  atomic<std::size_t> sleepers;           // sleepers_
  atomic<std::uint8_t> hold;              // hold_ (always 0 here)
  atomic<bool> stop;                      // stop_
  rl::mutex sleep_mutex;                  // sleep_mutex_
  pools::model::strict_condvar sleep_cv;  // sleep_cv_
  rl::var<std::size_t> signals;           // signals_, guarded by sleep_mutex_

  pool() {
    tail_index($) = 0;
    head_index($) = 0;
    signals($) = 0;
  }

  // two_lock_queue::push (two_lock_queue.hpp:74-81)
  void push(int task) {
    guard g(tail_mutex);
    RL_ASSERT(tail_index($) < capacity);
    slots[tail_index($)]($) = task;
    tail_index($) = tail_index($) + 1;
    pushed.store(pushed.load(std::memory_order_relaxed) + 1, push_publishes);
  }
  // maybe_nonempty_hint (two_lock_queue.hpp:226-230)
  bool maybe_nonempty_hint() {
    const std::uint64_t p = popped.load(std::memory_order_relaxed);
    return p != known_pushed.load(std::memory_order_relaxed) || p != pushed.load(std::memory_order_relaxed);
  }
  // try_pop (two_lock_queue.hpp:88-107), with the pool's admit() (thread_pool.hpp:593-597)
  bool try_pop(int& out) {
    if (!maybe_nonempty_hint()) return false;
    guard g(head_mutex);
    const std::uint64_t p = popped.load(std::memory_order_relaxed);
    if (p == known_pushed.load(std::memory_order_relaxed)) {
      known_pushed.store(pushed.load(std::memory_order_acquire), std::memory_order_relaxed);
      if (p == known_pushed.load(std::memory_order_relaxed)) return false;
    }
    if (hold.load(std::memory_order_relaxed) != 0) return false;  // admit()
    out = slots[head_index($)]($);
    head_index($) = head_index($) + 1;
    popped.store(p + 1, std::memory_order_release);
    return true;
  }
  // maybe_nonempty (two_lock_queue.hpp:145-147)
  bool maybe_nonempty() { return pushed.load(worker_reads_pushed) != popped.load(std::memory_order_relaxed); }
  // maybe_nonempty_relaxed (two_lock_queue.hpp:150-152)
  bool maybe_nonempty_relaxed() {
    return pushed.load(std::memory_order_relaxed) != popped.load(std::memory_order_relaxed);
  }

  // enqueue (thread_pool.hpp:508-520)
  void enqueue(int task) {
    push(task);
    if (sleepers.load(poster_reads_sleepers) != 0 && hold.load(std::memory_order_relaxed) == 0) wake_one();
  }
  // wake_one (thread_pool.hpp:522-531)
  void wake_one() {
    {
      guard g(sleep_mutex);
      if (sleepers.load(std::memory_order_relaxed) == 0) return;
      sleepers.fetch_sub(1, std::memory_order_relaxed);
      signals($) = signals($) + 1;
    }
    sleep_cv.notify_one();
  }
  // work_visible (thread_pool.hpp:542-544)
  bool work_visible() { return hold.load(std::memory_order_seq_cst) == 0 && maybe_nonempty(); }
  // may_exit (thread_pool.hpp:548-551)
  bool may_exit() {
    return stop.load(std::memory_order_acquire) &&
           (hold.load(std::memory_order_seq_cst) != 0 || !maybe_nonempty());
  }
  // wait_for_work (thread_pool.hpp:554-582)
  bool wait_for_work() {
    for (int round = 0; round < spin_rounds; ++round) {
      if (stop.load(std::memory_order_relaxed)) return !may_exit();
      if (hold.load(std::memory_order_relaxed) == 0 && maybe_nonempty_relaxed()) return true;
      // cpu_relax() / std::this_thread::yield(): nothing to model. (Not rl::yield: Relacy makes a
      // thread that yielded read newer values afterwards, which would hide stale reads below.)
    }
    guard g(sleep_mutex);
    sleepers.fetch_add(1, worker_announces);
    while (!work_visible() && !stop.load(std::memory_order_relaxed) && signals($) == 0)
      sleep_cv.wait(sleep_mutex);
    if (signals($) != 0) {
      signals($) = signals($) - 1;
    } else {
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    return !may_exit();
  }
  // stop_workers (thread_pool.hpp:648-657), without the join (the Relacy threads end)
  void stop_workers() {
    {
      guard g(sleep_mutex);
      stop.store(true, std::memory_order_release);
      signals($) = signals($) + sleepers.exchange(0, std::memory_order_relaxed);
    }
    sleep_cv.notify_all();
  }
};

struct futures_park_test : rl::test_suite<futures_park_test, 3> {
  pool* p;
  pools::model::completion<tasks>* done;

  void before() {
    p = new pool;
    done = new pools::model::completion<tasks>;
  }
  void thread(unsigned index) {
    if (index == 0) {
      p->enqueue(1);
      p->enqueue(2);
      done->wait_for_all();
      p->stop_workers();
      return;
    }
    // worker_main (thread_pool.hpp:586-612)
    int task = 0;
    for (;;) {
      if (p->try_pop(task)) {
        if (task == 1) p->enqueue(3);  // a task that posts a task
        done->ran(task);
        continue;
      }
      if (!p->wait_for_work()) break;
    }
  }
  void after() {
    done->check_each_ran_once();
    RL_ASSERT(!p->maybe_nonempty_relaxed());  // the workers left nothing queued
    delete done;
    delete p;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const rl::iteration_t iterations = pools::model::iterations_from(argc, argv, 100000);
  const bool ok = pools::model::passes<futures_park_test>(
      "futures: sleepers/signals handshake, 1 poster + 2 workers, 3 tasks", iterations);
  static const char* const what[] = {"none", "enqueue reads sleepers_ relaxed",
                                     "push publishes pushed_ with release", "worker announces itself relaxed",
                                     "work_visible reads pushed_ with acquire"};
  return pools::model::verdict("the futures pool's parking", POOLS_PARK_MUTANT, what[POOLS_PARK_MUTANT], ok);
}
