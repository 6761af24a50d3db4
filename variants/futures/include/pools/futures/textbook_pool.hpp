// SPDX-License-Identifier: MIT
// pools/futures/textbook_pool.hpp — a thread pool in one sitting: read this first.
//
//   pools::futures::textbook_pool pool(4);
//   pool.post([] { work(); });                          // run once, on some worker
//   std::future<int> f = pool.submit([] { return 42; }); // ... and hand back the result
//   int answer = f.get();                                // 42, or the task's exception
//
// THE IDEA. N worker threads take tasks from ONE shared FIFO queue. Posting a task means: lock,
// push, unlock, wake one worker. A worker's life is: lock, wait until the queue has a task, pop
// it, unlock, run it, repeat. Everything here is that idea plus the two rules that make it
// correct: how a worker sleeps without missing a task (the wait predicate), and how the pool
// stops without dropping one (the drain).
//
// ONE MUTEX guards everything the threads share: the queue, the stopping flag and the count of
// tasks not yet finished. A task runs OUTSIDE the lock, so the other workers can pop the next
// ones meanwhile: the lock is held for a push or a pop, a few stores, never for a task.
//
// WHAT IT CANNOT DO. A task that waits for the future of another task of the same pool blocks its
// worker; once every worker waits for a task still in the queue, nobody is left to run it: the
// pool deadlocks. That is why fork-join is not written this way (README, "Why nested waits
// deadlock"), and why the other variants exist.
#pragma once

#include <pools/submit.hpp>
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <condition_variable>
#include <cstddef>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

namespace pools::futures {

class textbook_pool {
 public:
  /// Starts `threads` worker threads; 0 means one per hardware thread (pools/thread_count.hpp).
  explicit textbook_pool(std::size_t threads) {
    threads = pools::thread_count(threads);
    workers_.reserve(threads);
    try {
      for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this, i] { work(i); });
    } catch (...) {
      // Starting a thread can fail (std::system_error). A constructor that throws never runs
      // the destructor, and destroying a joinable std::thread calls std::terminate: so the
      // workers already started are stopped and joined here, then the error goes on.
      stop_and_join();
      throw;
    }
  }

  /// Drains, then stops: every task posted before — and every task those tasks post meanwhile —
  /// runs before the destructor returns. Do not destroy the pool from one of its own tasks.
  ~textbook_pool() { stop_and_join(); }

  textbook_pool(const textbook_pool&) = delete;
  textbook_pool& operator=(const textbook_pool&) = delete;

  /// pools::Executor: runs `task` once on a worker. Any thread may call it, a task too.
  /// An exception escaping the task goes to pools::report_unhandled_exception.
  void post(unique_function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      queue_.push(std::move(task));
      ++unfinished_;
      POOLS_TRACE_POST(this, 0);
      POOLS_TRACE_QUEUE_DEPTH(this, queue_.size());
    }
    // Notify after unlocking: the woken worker can take the mutex at once instead of waking
    // only to block on it again. Not lost if no worker is waiting yet: a worker checks the queue
    // (under the mutex) before it waits, and our push happened under that mutex.
    POOLS_TRACE_WAKE_ANY(this);
    task_ready_.notify_one();
  }

  /// Runs f(args...) on a worker; the future holds its result or its exception.
  /// (pools::submit does it through post(): the task owns a std::promise and fulfils it.)
  template <class F, class... Args>
  auto submit(F&& f, Args&&... args) {
    return pools::submit(*this, std::forward<F>(f), std::forward<Args>(args)...);
  }

  /// Blocks until the queue is empty and no task is running. Not from inside a task: it would
  /// wait for itself.
  void wait() {
    std::unique_lock lock(mutex_);
    all_done_.wait(lock, [this] { return unfinished_ == 0; });
  }

  std::size_t concurrency() const noexcept { return workers_.size(); }

 private:
  void stop_and_join() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    // Every sleeping worker must see stopping_: notify_all, not notify_one.
    task_ready_.notify_all();
    // A worker leaves only once the queue is empty AND no task is still running (work() says
    // why both), so after the joins nothing is left to run.
    for (std::thread& t : workers_) t.join();
  }

  void work(std::size_t index) {
    POOLS_TRACE_WORKER(this, "futures textbook", static_cast<unsigned>(index));
    std::unique_lock lock(mutex_);
    for (;;) {
      // THE WAIT PREDICATE. wait() may return without a notify (a spurious wake-up), or after a
      // notify whose task another worker took first: so the loop re-checks the condition, under
      // the mutex, every time it wakes, and sleeps again while it is false. (It is what
      // wait(lock, predicate) does inside, spelled out so that each real sleep is recorded:
      // POOLS_TRACE_PARKED is the wait itself, traced as a park when tracing is on, pools/trace.hpp.)
      while (queue_.empty() && !(stopping_ && unfinished_ == 0))
        POOLS_TRACE_PARKED(this, task_ready_.wait(lock));
      // THE DRAIN. Stopping with an empty queue is not enough to leave: a task still running on
      // another worker may post more. unfinished_ == 0 says nothing is queued or running, so
      // nothing can post any more (nobody outside posts to a pool being destroyed).
      if (queue_.empty()) return;
      unique_function<void()> task = std::move(queue_.front());
      queue_.pop();
      lock.unlock();  // run the task without the lock: other workers pop meanwhile
      POOLS_TRACE_TASK_BEGIN(0);
      pools::invoke_reporting(task);
      POOLS_TRACE_TASK_END(0);
      task = nullptr;  // destroy what the task captured before counting it finished
      lock.lock();
      // These two notify while holding the lock, unlike post(): it is correct either way (the
      // waiters re-check their predicate under the mutex), and here the lock is taken again at
      // the top of the loop anyway, so unlocking first would only add a lock/unlock pair. The
      // cost, a woken thread first blocking on the mutex for a moment, is paid only when the
      // pool has just run out of work, not on the busy path.
      if (--unfinished_ == 0) {
        all_done_.notify_all();                   // wait() callers
        if (stopping_) task_ready_.notify_all();  // workers waiting for the drain to end
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable task_ready_;  // "queue_ not empty, or stopping_ and all done"
  std::condition_variable all_done_;    // "unfinished_ == 0", for wait()
  std::queue<unique_function<void()>> queue_;
  std::size_t unfinished_ = 0;  // posted, not yet finished (queued + running)
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above is ready
};

}  // namespace pools::futures
