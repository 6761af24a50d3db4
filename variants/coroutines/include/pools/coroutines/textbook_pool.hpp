// SPDX-License-Identifier: MIT
// pools/coroutines/textbook_pool.hpp — the coroutine pool in one sitting: read this first.
//
//   pools::coroutines::textbook_pool pool(4);
//   int v = sync_wait(pool, fib(20));        // task<T>, when_all and sync_wait, unchanged
//   pool.spawn(background());                // detached; the destructor waits for it
//   pool.post([] { ... });                   // pools::Executor: a plain callable
//   co_await pool.schedule();                // inside a coroutine: continue on a pool thread
//
// WHAT IS QUEUED. A coroutine that suspends leaves its state — locals, parameters, where it
// stopped — in a heap block, the coroutine *frame*. A std::coroutine_handle<> is a pointer to
// that frame: `h.resume()` runs the coroutine from where it stopped until it suspends again or
// ends. The handle does not own the frame, the way a raw pointer does not own its object: a
// task<T> object owns its frame (task.hpp), and a detached coroutine (post, spawn) destroys its
// own at its end. So this pool is nothing but ONE queue of handles and N threads that pop one,
// call resume(), and come back for the next.
//
// HOW A COROUTINE GETS HERE. Whatever suspends a coroutine decides who resumes it. To move onto
// the pool, a coroutine awaits schedule(): its await_suspend hands the coroutine's own handle to
// enqueue(). when_all forks children the same way (scheduler::enqueue), and async_event,
// async_mutex and channel hand a woken waiter back the same way (detail/resumer.hpp). sync_wait
// starts a task from outside by enqueueing a small root coroutine and blocking until it is done.
//
// ONE LOCK. The queue is shared by every thread that posts and every pool thread that pops, so a
// std::mutex guards it, and with it the state of shutdown (unfinished_, stopping_). The lock
// also carries the data: what a thread wrote before its enqueue (unlock) is visible to the
// thread that pops the handle (lock) and resumes the coroutine. An idle thread sleeps on a
// condition variable; each enqueue wakes one. This one lock is also the pool's bottleneck:
// every fork of a when_all and every resume goes through it (the tuned thread_pool gives each
// worker its own lock-free deque instead: README, "The tuned pool").
//
// SHUTDOWN. The destructor drains: a pool thread leaves only when the queue is empty and no
// posted or spawned coroutine is unfinished. Counting matters because a suspended coroutine is in
// no queue (a spawned task waiting on an event): the queue alone can be empty while work is
// still to come. Work posted while draining is counted before its poster finishes, so the count
// cannot touch zero early. Do not destroy the pool from one of its own threads.
#pragma once

#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/executor.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace pools::coroutines {

class textbook_pool final : public scheduler {
 public:
  /// Starts `threads` threads; 0 means one per hardware thread (pools/thread_count.hpp).
  explicit textbook_pool(std::size_t threads = std::thread::hardware_concurrency());
  textbook_pool(const textbook_pool&) = delete;
  textbook_pool& operator=(const textbook_pool&) = delete;
  /// Drains (see SHUTDOWN above), then joins the threads.
  ~textbook_pool();

  std::size_t concurrency() const noexcept { return threads_.size(); }

  /// Makes the suspended coroutine `h` runnable: pushes it onto the queue, wakes one thread.
  void enqueue(std::coroutine_handle<> h) override;

  /// `co_await pool.schedule()` suspends the coroutine and resumes it on a pool thread. On a
  /// pool thread it is a yield: the coroutine goes to the back of the queue.
  struct schedule_awaiter {
    textbook_pool& pool;
    bool await_ready() const noexcept { return false; }  // always suspend: we want to move
    void await_suspend(std::coroutine_handle<> h) const { pool.enqueue(h); }
    void await_resume() const noexcept {}
  };
  schedule_awaiter schedule() noexcept { return {*this}; }

  /// pools::Executor: runs f() once on a pool thread, inside a small detached coroutine (the
  /// queue holds only coroutines). An exception goes to pools::report_unhandled_exception.
  void post(pools::unique_function<void()> f) { start(run_detached(std::move(f))); }

  /// Runs `t` detached: the pool owns it now; its result is dropped, its exception reported
  /// (as for post), and the destructor waits for it even while it is suspended.
  template <class T>
  void spawn(task<T> t) {
    if (!t.valid()) throw std::invalid_argument("pools::coroutines::textbook_pool::spawn: empty task");
    start(run_detached(std::move(t)));
  }

 private:
  // A coroutine nobody awaits: it starts suspended, runs when a pool thread resumes it, and at
  // its end destroys its own frame and tells the pool it has finished.
  struct detached {
    struct promise_type;
    std::coroutine_handle<promise_type> handle;
  };
  static detached run_detached(pools::unique_function<void()> f);
  template <class T>
  static detached run_detached(task<T> t) {
    co_await std::move(t);  // symmetric transfer into t; t's exception is rethrown here
  }

  void start(detached d);              // counts d as unfinished, then enqueues it
  void finished() noexcept;            // a detached coroutine ended: uncounts it
  void run_thread(std::size_t index);  // the loop every pool thread runs
  void stop_and_join() noexcept;

  std::mutex mutex_;                           // guards queue_, unfinished_ and stopping_
  std::condition_variable wake_;               // "the queue is not empty, or it is time to leave"
  std::deque<std::coroutine_handle<>> queue_;  // FIFO: oldest first
  std::size_t unfinished_ = 0;                 // posted + spawned coroutines not yet ended
  bool stopping_ = false;                      // the destructor has begun
  std::vector<std::thread> threads_;
};

struct textbook_pool::detached::promise_type {
  textbook_pool* pool = nullptr;  // set by start()

  detached get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
  std::suspend_always initial_suspend() const noexcept { return {}; }  // start() queues it

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
      textbook_pool* owner = self.promise().pool;
      self.destroy();     // first the frame (the callable, the task and what they captured) ...
      owner->finished();  // ... then the count: the draining destructor waits for both
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() const noexcept { return {}; }

  void return_void() noexcept {}
  void unhandled_exception() noexcept { report_unhandled_exception(std::current_exception()); }
};

static_assert(pools::Executor<textbook_pool>);

}  // namespace pools::coroutines
