// SPDX-License-Identifier: MIT
// stealing_pool.hpp — exercise 03-work-stealing: per-worker deques and stealing, shown on fib.
// docs/course/03-work-stealing.md has the story; scripts/grade-exercise.sh 03-work-stealing grades it.
//
// As given, this is shared_queue_pool.hpp: one queue, one mutex, every worker contending for
// both. It works (the check's correctness parts pass), but the check fails it: no task goes onto
// a worker's deque, none is stolen. Your job, the places marked TODO(student):
//  1. Give each worker its own exercise::work_deque (work_deque.hpp: pools::chase_lev_deque of
//     common/include/pools/chase_lev_deque.hpp, which also tells the check what it sees).
//     A post() from inside a task goes onto the posting worker's own deque (no lock), and counts
//     in local_pushes(). A post() from any other thread goes to a shared queue, as now.
//  2. A worker runs the newest task of its own deque first (pop), then the shared queue, then
//     steals the oldest task of another worker's deque (steal), which counts in steals().
//  3. Idle workers still sleep, and a worker that pushes onto its deque must not leave work
//     unseen while others sleep: think about the lost wake-up (hints in the doc).
//  4. The destructor still drains: every task posted before it, and every task those post, runs.
// The deque holds trivially copyable values only: store pointers to heap task nodes.
// steals() and local_pushes() must agree with what the deques saw: the check compares them.
#pragma once

#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "work_deque.hpp"

namespace exercise {

class stealing_pool {
 public:
  explicit stealing_pool(std::size_t threads) {
    for (std::size_t i = 0; i < (threads == 0 ? 1 : threads); ++i) workers_.emplace_back([this] { work(); });
  }

  /// Drains: every task posted before, and every task those post meanwhile, runs; then joins.
  ~stealing_pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }

  stealing_pool(const stealing_pool&) = delete;
  stealing_pool& operator=(const stealing_pool&) = delete;

  /// Runs `task` once on a worker. Any thread may call it, a task too.
  void post(pools::unique_function<void()> task) {
    // TODO(student): from a worker of this pool, push onto its own deque and count a local push.
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  std::size_t concurrency() const { return workers_.size(); }

  // --- instrumentation the check reads: keep them true ------------------------------------------
  /// Tasks a worker took from ANOTHER worker's deque.
  std::uint64_t steals() const { return 0; }  // TODO(student)
  /// Posts made by a worker of this pool onto its own deque.
  std::uint64_t local_pushes() const { return 0; }  // TODO(student)

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left (see shared_queue_pool.hpp)
      pools::unique_function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      pools::invoke_reporting(task);
      task = nullptr;
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<pools::unique_function<void()>> queue_;  // keep it for posts from outside the pool
  bool stopping_ = false;
  // TODO(student): one exercise::work_deque per worker, which worker the calling thread is
  // (a thread_local), the counters, and what an idle worker needs to sleep and be woken.
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
