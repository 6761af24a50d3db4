// SPDX-License-Identifier: MIT
// CHEAT (instructor only): slow but correct. The reference solution with a "fairness" pause: after
// each task a worker spins for 2 microseconds so that "the other workers get a turn at the lock".
// Every task still runs exactly once, on the pool's own threads, the destructor drains: every
// correctness test passes. The pause costs each task 2 us of a worker's time, several times a
// task's own cost: the hidden speed tests (course/instructor/hidden/01-first-pool/) score it below
// full points.
#pragma once

#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace pools::mine {

class pool {
 public:
  /// Starts `threads` worker threads (at least one). If one cannot start (std::system_error),
  /// the ones already started are stopped and joined before the error leaves the constructor.
  explicit pool(std::size_t threads) {
    try {
      for (std::size_t i = 0; i < (threads == 0 ? 1 : threads); ++i)
        workers_.emplace_back([this] { work(); });
    } catch (...) {
      // No destructor runs for a constructor that throws, and a joinable std::thread destroyed
      // unjoined calls std::terminate: stop the started workers here.
      stop_and_join();
      throw;
    }
  }

  /// Drains (every posted task runs), then stops and joins the workers.
  ~pool() { stop_and_join(); }

  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// Runs `task` once on a worker; callable from any thread, including from inside a task.
  void post(pools::unique_function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push(std::move(task));
    }
    // After unlocking: the woken worker can take the mutex at once. Not lost if no worker waits
    // yet: a worker checks the queue under the mutex before it waits, and the push was under it.
    wake_.notify_one();
  }

  /// How many tasks run at once: the number of worker threads.
  std::size_t concurrency() const { return workers_.size(); }

 private:
  void stop_and_join() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;  // workers finish the queue, including what its tasks post, then leave
    }
    // Every sleeping worker must see stopping_: notify_all, not notify_one.
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void work() {
    for (;;) {
      pools::unique_function<void()> task;
      {
        std::unique_lock lock(mutex_);
        // The predicate is re-checked under the mutex after every wake-up: a wake-up can be
        // spurious, or another worker can have taken the task first.
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        // Stopping with an empty queue: leave. A task still running on another worker may post
        // more; that worker comes back here afterwards and runs it, so the drain completes.
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop();
      }
      // Outside the lock, so the other workers pop meanwhile; an exception goes to the pool's
      // report handler, not to std::terminate.
      pools::invoke_reporting(task);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;  // "queue_ not empty, or stopping_"
  std::queue<pools::unique_function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace pools::mine
