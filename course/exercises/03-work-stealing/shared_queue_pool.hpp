// SPDX-License-Identifier: MIT
// shared_queue_pool.hpp — exercise 03-work-stealing: the baseline. Given; do not edit (the check
// times your pool against this one). stealing_pool.hpp starts as a copy of it.
//
// Every worker takes tasks from ONE queue under ONE mutex: each post and each pop of every worker
// goes through the same lock and the same cache line. Correct and simple; with many small tasks
// (fib: one task per call) the lock is the bottleneck.
#pragma once

#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace exercise {

class shared_queue_pool {
 public:
  explicit shared_queue_pool(std::size_t threads) {
    for (std::size_t i = 0; i < (threads == 0 ? 1 : threads); ++i) workers_.emplace_back([this] { work(); });
  }

  /// Drains: every task posted before, and every task those post meanwhile, runs; then joins.
  ~shared_queue_pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }

  shared_queue_pool(const shared_queue_pool&) = delete;
  shared_queue_pool& operator=(const shared_queue_pool&) = delete;

  void post(pools::unique_function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  std::size_t concurrency() const { return workers_.size(); }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      // Stopping with an empty queue: leave. A task still running elsewhere may post more; its
      // worker comes back here and runs it, so the drain still completes.
      if (queue_.empty()) return;
      pools::unique_function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      pools::invoke_reporting(task);
      task = nullptr;  // destroy what the task captured outside the lock
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<pools::unique_function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
