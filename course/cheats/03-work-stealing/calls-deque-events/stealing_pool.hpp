// SPDX-License-Identifier: MIT
// CHEAT (instructor only): the starting point's shared queue, which reports pushes and steals to
// exercise::deque_events itself, as if its tasks went through work_deques: a push for every post
// from a worker, a steal for every seventh task a worker takes, an attempt that failed for the
// others, and counters that agree. Only the given work_deque may report to deque_events: the
// static check refuses the name in a submission.
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
    if (on_worker_) {
      deque_events::pushed();
      ++pushes_;
    }
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  std::size_t concurrency() const { return workers_.size(); }

  // --- instrumentation the check reads: keep them true ------------------------------------------
  /// Tasks a worker took from ANOTHER worker's deque.
  std::uint64_t steals() const { return steals_; }
  /// Posts made by a worker of this pool onto its own deque.
  std::uint64_t local_pushes() const { return pushes_; }

 private:
  void work() {
    on_worker_ = true;
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left (see shared_queue_pool.hpp)
      pools::unique_function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      if (++taken_ % 7 == 0) {
        deque_events::stolen_by_another_thread();
        ++steals_;
      } else {
        deque_events::steal_failed_for_another_thread();
      }
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
  std::uint64_t taken_ = 0;  // guarded by mutex_
  std::atomic<std::uint64_t> pushes_{0}, steals_{0};
  static inline thread_local bool on_worker_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
