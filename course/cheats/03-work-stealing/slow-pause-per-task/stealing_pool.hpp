// SPDX-License-Identifier: MIT
// CHEAT (instructor only): slow but correct. The reference solution with a "fairness" pause: after
// each task a worker spins for 1 microsecond so that "the thieves get a turn". Every task still
// runs exactly once, the posts go onto the worker's own deque, other workers steal them, the counters
// agree: every visible test passes. The pause costs each task 1 us of a worker's time, several
// times a fib task's own cost: the hidden speed tests (course/instructor/hidden/03-work-stealing/)
// score it below full points.
#pragma once

#include <pools/detail/seq_cst_fence.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "work_deque.hpp"

namespace exercise {

class stealing_pool {
 public:
  explicit stealing_pool(std::size_t threads) {
    const std::size_t n = threads == 0 ? 1 : threads;
    for (std::size_t i = 0; i < n; ++i) slots_.push_back(std::make_unique<slot>());
    for (std::size_t i = 0; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
  }

  /// Drains: every task posted before, and every task those post meanwhile, runs; then joins.
  ~stealing_pool() {
    {
      std::unique_lock lock(mutex_);
      // unfinished_ counts every task posted and not yet finished, and a task's children are
      // counted before it finishes: zero means nothing is queued, running or about to be posted.
      all_done_.wait(lock, [this] { return unfinished_.load(std::memory_order_acquire) == 0; });
      stopping_ = true;
      ++epoch_;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  stealing_pool(const stealing_pool&) = delete;
  stealing_pool& operator=(const stealing_pool&) = delete;

  /// Runs `task` once on a worker. Any thread may call it, a task too.
  void post(pools::unique_function<void()> fn) {
    // relaxed: whoever runs the task got it through the deque (release/acquire) or the mutex,
    // so this increment is ordered before the decrement that follows the task.
    unfinished_.fetch_add(1, std::memory_order_relaxed);
    auto* t = new task{std::move(fn)};
    if (current_pool_ == this) {
      push_local(current_index_, t);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      injected_.push_back(t);
      injected_count_.store(injected_.size(), std::memory_order_relaxed);
      ++epoch_;
    }
    wake_.notify_one();
  }

  std::size_t concurrency() const { return workers_.size(); }

  /// Tasks a worker took from ANOTHER worker's deque.
  std::uint64_t steals() const { return sum(&slot::steals); }
  /// Posts made by a worker of this pool onto its own deque.
  std::uint64_t local_pushes() const { return sum(&slot::local_pushes); }

 private:
  struct task {
    pools::unique_function<void()> fn;
  };

  // One per worker, on its own cache lines: the deque's owner end and the counters are written by
  // that worker alone.
  struct alignas(64) slot {
    work_deque<task*> deque;
    // Written by the owner only (load + store, no RMW needed), read by anyone: relaxed atomics.
    std::atomic<std::uint64_t> steals{0};
    std::atomic<std::uint64_t> local_pushes{0};
  };

  static void bump(std::atomic<std::uint64_t>& counter) {
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  std::uint64_t sum(std::atomic<std::uint64_t> slot::* counter) const {
    std::uint64_t total = 0;
    for (const auto& s : slots_) total += ((*s).*counter).load(std::memory_order_relaxed);
    return total;
  }

  void push_local(std::size_t me, task* t) {
    slot& s = *slots_[me];
    s.deque.push(t);
    bump(s.local_pushes);
    // The pusher's half of the handshake (file comment). Without the fence, the load of sleepers_
    // could be ordered before the push becomes visible, and a worker that just looked at our
    // empty deque could go to sleep unwoken.
    pools::detail::seq_cst_fence();
    if (sleepers_.load(std::memory_order_relaxed) > 0) {
      {
        std::lock_guard lock(mutex_);
        ++epoch_;
      }
      wake_.notify_one();
    }
  }

  // Own deque (newest first), then the shared queue, then the other deques (oldest first).
  task* find_task(std::size_t me) {
    task* t = nullptr;
    if (slots_[me]->deque.pop(t)) return t;
    // relaxed: a hint that spares the mutex when the shared queue is empty. A post it misses
    // also moved epoch_ under the mutex, so the sleep path below looks again.
    if (injected_count_.load(std::memory_order_relaxed) > 0) {
      std::lock_guard lock(mutex_);
      if (!injected_.empty()) {
        t = injected_.front();
        injected_.pop_front();
        injected_count_.store(injected_.size(), std::memory_order_relaxed);
        return t;
      }
    }
    const std::size_t n = slots_.size();
    for (std::size_t i = 1; i < n; ++i) {
      slot& victim = *slots_[(me + i) % n];
      for (;;) {
        auto r = victim.deque.steal();
        if (r.status == pools::steal_status::success) {
          bump(slots_[me]->steals);
          return r.value;
        }
        if (r.status == pools::steal_status::empty) break;
        // lost_race: another thread took that item; the victim may still have more.
      }
    }
    return nullptr;
  }

  bool any_deque_has_work() const {
    for (const auto& s : slots_) {
      if (!s->deque.looks_empty()) return true;
    }
    return false;
  }

  void run(task* t) {
    pools::invoke_reporting(t->fn);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(1);
    while (std::chrono::steady_clock::now() < until) {
    }
    delete t;  // what the task captured is destroyed before it counts as finished
    // acq_rel: the destructor's acquire load of zero sees every task's effects.
    if (unfinished_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard lock(mutex_);  // so the destructor cannot check, miss this, then sleep
      all_done_.notify_all();
    }
  }

  void work(std::size_t me) {
    current_pool_ = this;
    current_index_ = me;
    for (;;) {
      if (task* t = find_task(me)) {
        run(t);
        continue;
      }
      std::uint64_t seen;
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;  // the destructor saw unfinished_ == 0: nothing is left anywhere
        seen = epoch_;
      }
      // The sleeper's half of the handshake (file comment): announce, fence, look once more.
      sleepers_.fetch_add(1, std::memory_order_relaxed);
      pools::detail::seq_cst_fence();
      if (!any_deque_has_work()) {
        std::unique_lock lock(mutex_);
        // epoch_ moves on every post to the shared queue, every wake-up for a local push and on
        // stopping: a change since `seen` means something may have been missed, so look again.
        wake_.wait(lock, [&] { return epoch_ != seen || !injected_.empty(); });
      }
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  // Which pool and worker the calling thread is, so a post from a task finds its own deque.
  static inline thread_local const stealing_pool* current_pool_ = nullptr;
  static inline thread_local std::size_t current_index_ = 0;

  std::vector<std::unique_ptr<slot>> slots_;
  std::atomic<std::size_t> unfinished_{0};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;                            // guards injected_, epoch_, stopping_
  std::condition_variable wake_;                // "epoch_ moved, or injected_ not empty"
  std::condition_variable all_done_;            // "unfinished_ == 0", for the destructor
  std::deque<task*> injected_;                  // posts from outside the pool
  std::atomic<std::size_t> injected_count_{0};  // injected_.size(), written under the mutex
  std::uint64_t epoch_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
