// SPDX-License-Identifier: MIT
// pools/thread_per_task_executor.hpp — a new std::thread for every task: the naive baseline.
//
// This is what "just use threads" costs: thread creation (tens of microseconds) per task. The
// bench uses it as the naive reference. It is capped so that a burst of posts cannot exhaust the
// machine: at most `max_threads` threads exist; further tasks wait in a FIFO and each finishing
// thread starts a fresh thread for the next one (still one thread per task, never reused).
#pragma once

#include <pools/executor.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <utility>

namespace pools {

class thread_per_task_executor {
 public:
  explicit thread_per_task_executor(std::size_t max_threads = std::thread::hardware_concurrency())
      : max_threads_(std::max<std::size_t>(max_threads, 1)) {}

  thread_per_task_executor(const thread_per_task_executor&) = delete;
  thread_per_task_executor& operator=(const thread_per_task_executor&) = delete;

  /// Drains (pools::Executor contract): waits for every task, including tasks posted meanwhile.
  ~thread_per_task_executor() {
    std::list<std::thread> finished;
    {
      std::unique_lock lock(mutex_);
      all_done_.wait(lock, [this] { return running_ == 0 && pending_.empty(); });
      finished.swap(finished_);
    }
    for (auto& t : finished) t.join();
  }

  template <class F>
  void post(F&& f) {
    std::list<std::thread> finished;
    {
      std::lock_guard lock(mutex_);
      if (running_ < max_threads_) {
        ++running_;
        start_thread(task_function(std::forward<F>(f)), std::thread{});
      } else {
        pending_.emplace_back(std::forward<F>(f));
      }
      finished.swap(finished_);
    }
    // Reaped outside the lock. A thread in finished_ has nothing left to do after its unlock, so
    // each join waits at most for one thread's exit.
    for (auto& t : finished) t.join();
  }

  std::size_t concurrency() const noexcept { return max_threads_; }

 private:
  // Requires mutex_ held. The handle is stored before the lock is released, and the thread
  // needs the lock to hand its own handle on, so it can never look for a handle that is not there.
  //
  // Who joins an exited thread: if it started a successor for a pending task, the successor
  // (first thing it does); otherwise the next post() or the destructor, via finished_. A thread
  // joins at most one predecessor and only *before* its task, never after its unlock, so every
  // join waits for a thread that is already on its way out. (The earlier design let each
  // finishing thread join the previous finisher after its unlock: under a stream of short tasks
  // those joins chained — each thread alive until its predecessor exited — and the chain grew to
  // tens of thousands of threads until pthread_create failed.)
  void start_thread(task_function task, std::thread predecessor) {
    auto self = live_.emplace(live_.end());
    *self = std::thread([this, self, task = std::move(task), predecessor = std::move(predecessor)]() mutable {
      if (predecessor.joinable()) predecessor.join();
      invoke_reporting(task);
      task = nullptr;  // destroy captured state before announcing completion
      std::lock_guard lock(mutex_);
      if (!pending_.empty()) {
        std::thread me = std::move(*self);
        live_.erase(self);
        start_thread(std::move(pending_.front()), std::move(me));
        pending_.pop_front();
      } else {
        finished_.splice(finished_.end(), live_, self);
        if (--running_ == 0) all_done_.notify_all();
      }
      // Nothing touches *this after the unlock: the destructor may run from here on (it joins
      // this thread directly or through the successor, which is counted in running_).
    });
  }

  const std::size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable all_done_;
  std::size_t running_ = 0;                 // threads started and not finished
  std::deque<task_function> pending_;       // tasks waiting for a thread slot
  std::list<std::thread> live_, finished_;  // handles: running, and exited-but-not-joined
};

template <>
struct executor_traits<thread_per_task_executor> {
  static constexpr bool reuses_threads = false;
  static constexpr bool context_per_task = true;
};

}  // namespace pools
