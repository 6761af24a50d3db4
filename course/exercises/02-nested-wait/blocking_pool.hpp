// SPDX-License-Identifier: MIT
// blocking_pool.hpp — exercise 02-nested-wait: the pool the exercise runs on. Given; do not edit
// (the check reads its counters). Your code goes in nested_wait.hpp.
//
// A fixed number of worker threads take tasks from one shared queue, under one mutex and one
// condition variable: the shape of variants/futures/include/pools/futures/textbook_pool.hpp. A
// task that blocks (future::get) blocks its worker thread; no other thread takes its place.
//
// Three things beyond the textbook pool:
//  - try_run_one(): any thread may run one queued task itself. A task that must wait can use it
//    to do useful work instead of blocking (fix 1 of the exercise).
//  - counters the check reads to tell a deadlock from slow progress, and to see which fix ran.
//  - a pool of 0 threads: no worker at all; the check runs its tasks one at a time itself
//    (run_oldest()), so it sees every task begin and end. On such a pool a task that waits for
//    another can never be woken: the only thread is the one running it.
#pragma once

#include <pools/submit.hpp>
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

namespace exercise {

class blocking_pool {
 public:
  /// `threads` workers; 0: none (the check's step-by-step pool, run_oldest()).
  explicit blocking_pool(std::size_t threads) {
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }

  /// Drains (every queued task runs: on the workers, or here when there are none), then joins.
  /// Hangs if a task never finishes: the check never destroys a pool it found deadlocked.
  ~blocking_pool() {
    if (workers_.empty()) {
      while (run_oldest()) {
      }
    }
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }

  blocking_pool(const blocking_pool&) = delete;
  blocking_pool& operator=(const blocking_pool&) = delete;

  /// Runs `task` once, on a worker (or on a thread that calls try_run_one).
  void post(pools::unique_function<void()> task) {
    posted_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  /// Runs f() on the pool; the future holds its result or its exception.
  template <class F>
  auto submit(F&& f) {
    return pools::submit(*this, std::forward<F>(f));
  }

  std::size_t concurrency() const { return workers_.size(); }

  /// Runs one queued task on the calling thread; false when the queue is empty.
  /// It takes the NEWEST task (the back of the queue), where the workers take the oldest: a
  /// waiting task's own children are the newest, so helping runs them first and nests at most as
  /// deep as the task tree. Taking the oldest instead can nest one unrelated waiting task inside
  /// another until the thread's stack overflows.
  bool try_run_one() {
    pools::unique_function<void()> task;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) return false;
      task = std::move(queue_.back());
      queue_.pop_back();
    }
    helped_.fetch_add(1, std::memory_order_relaxed);
    run(task);
    return true;
  }

  /// The check's step: runs the OLDEST queued task on the calling thread, as a worker would
  /// (not counted as helping); false when the queue is empty.
  bool run_oldest() {
    pools::unique_function<void()> task;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) return false;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    run(task);
    return true;
  }

  // --- counters, for the check -----------------------------------------------------------------
  std::uint64_t posted() const { return posted_.load(std::memory_order_relaxed); }
  std::uint64_t finished() const { return finished_.load(std::memory_order_relaxed); }
  /// Tasks run through try_run_one.
  std::uint64_t helped() const { return helped_.load(std::memory_order_relaxed); }
  /// Workers inside a task they took from the queue (nested helping is not counted again).
  std::size_t busy_workers() const { return busy_.load(std::memory_order_relaxed); }
  std::size_t queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      pools::unique_function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      busy_.fetch_add(1, std::memory_order_relaxed);
      run(task);
      busy_.fetch_sub(1, std::memory_order_relaxed);
      lock.lock();
    }
  }

  void run(pools::unique_function<void()>& task) {
    pools::invoke_reporting(task);
    task = nullptr;  // what the task captured is destroyed before it counts as finished
    finished_.fetch_add(1, std::memory_order_relaxed);
  }

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<pools::unique_function<void()>> queue_;
  bool stopping_ = false;
  std::atomic<std::uint64_t> posted_{0}, finished_{0}, helped_{0};
  std::atomic<std::size_t> busy_{0};
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace exercise
