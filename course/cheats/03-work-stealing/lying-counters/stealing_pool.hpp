// SPDX-License-Identifier: MIT
// stealing_pool.hpp — exercise 03-work-stealing, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_03-work-stealing_cheat_ proves the check fails it.
// docs/course/03-work-stealing.md has the story; scripts/grade-exercise.sh 03-work-stealing grades it.
//
// THE CHEAT: the shared-queue pool, unchanged, with counters that lie: local_pushes() counts
// every post made from a worker thread, steals() every task a worker took from the shared queue. Both are
// non-zero and at most one per post, which is all the old check asked; no deque ever saw a push or a steal.
#pragma once

#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <atomic>
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
    if (on_worker_) local_pushes_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  std::size_t concurrency() const { return workers_.size(); }

  // --- instrumentation the check reads: keep them true ------------------------------------------
  /// Tasks a worker took from ANOTHER worker's deque.
  std::uint64_t steals() const { return steals_.load(std::memory_order_relaxed); }
  /// Posts made by a worker of this pool onto its own deque.
  std::uint64_t local_pushes() const { return local_pushes_.load(std::memory_order_relaxed); }

 private:
  void work() {
    on_worker_ = true;
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left (see shared_queue_pool.hpp)
      pools::unique_function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      steals_.fetch_add(1, std::memory_order_relaxed);  // "taken by a worker": called a steal
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
  std::atomic<std::uint64_t> steals_{0}, local_pushes_{0};
  static inline thread_local bool on_worker_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
