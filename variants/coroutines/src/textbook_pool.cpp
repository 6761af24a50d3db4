// SPDX-License-Identifier: MIT
// The textbook coroutine pool (textbook_pool.hpp explains the design; this file is its loop).
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>

namespace pools::coroutines {

textbook_pool::textbook_pool(std::size_t threads) {
  threads = pools::thread_count(threads);  // 0: one per hardware thread, as in every pool
  threads_.reserve(threads);
  try {
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this, i] { run_thread(i); });
  } catch (...) {  // could not start them all: stop the ones that did start, then report
    stop_and_join();
    throw;
  }
}

textbook_pool::~textbook_pool() {
  stop_and_join();
}

void textbook_pool::stop_and_join() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  // Every thread re-checks its predicate; those with nothing left to do leave. The ones still
  // needed (work queued, or a coroutine unfinished) stay until finished() wakes them again.
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void textbook_pool::run_thread(std::size_t index) {
  detail::tl_scheduler = this;  // coroutines on this thread find their pool here (scheduler.hpp)
  POOLS_TRACE_WORKER(this, "coroutines textbook", static_cast<unsigned>(index));
  for (;;) {
    std::coroutine_handle<> next;
    {
      std::unique_lock lock(mutex_);
      // A loop on the predicate, not a bare wait(): a condition variable may wake spuriously, and
      // a notify sent while no thread was waiting is lost. The state under the mutex is the truth;
      // the notification only says "look again". wait() releases the mutex while asleep, so
      // posters can get in, and takes it back before the loop checks. (wait(lock, predicate) is
      // this loop, spelled out so that each real sleep is recorded: POOLS_TRACE_PARKED is the
      // wait itself, traced as a park when tracing is on, pools/trace.hpp.)
      while (queue_.empty() && !(stopping_ && unfinished_ == 0)) POOLS_TRACE_PARKED(this, wake_.wait(lock));
      if (queue_.empty()) break;  // stopping, and nothing is queued or unfinished: leave
      next = queue_.front();
      queue_.pop_front();
    }
    // Outside the lock: the coroutine runs for as long as it likes, and it may itself enqueue
    // (fork children, wake waiters, post) — under the lock it would stall every other thread, and
    // its own enqueue would deadlock on a std::mutex this thread already holds.
    POOLS_TRACE_TASK_BEGIN(POOLS_TRACE_ID(next.address()));
    next.resume();
    POOLS_TRACE_TASK_END(POOLS_TRACE_ID(next.address()));  // (only the address: next may be gone)
  }
  detail::tl_scheduler = nullptr;
}

void textbook_pool::enqueue(std::coroutine_handle<> h) {
  std::lock_guard lock(mutex_);
  queue_.push_back(h);
  POOLS_TRACE_POST(this, POOLS_TRACE_ID(h.address()));
  POOLS_TRACE_QUEUE_DEPTH(this, queue_.size());
  // One thread suffices: one item was added. The notify is under the lock, although the woken
  // thread may then briefly wait for it: the caller may be a thread outside the pool waking the
  // last suspended coroutine while the destructor drains. Notified after unlocking, that
  // coroutine could run, finish and let the destructor return — destroying wake_ — before the
  // notify_one call. The unlock is the caller's last touch of the pool.
  POOLS_TRACE_WAKE_ANY(this);
  wake_.notify_one();
}

void textbook_pool::start(detached d) {
  d.handle.promise().pool = this;
  std::unique_lock lock(mutex_);
  try {
    queue_.push_back(d.handle);  // may throw std::bad_alloc (a new block of the deque); then unchanged
  } catch (...) {
    // Refused: nobody else has seen the coroutine, so it is not counted (a count left behind
    // would keep the destructor waiting forever) and its frame, with the callable or task it
    // holds, is destroyed here; the caller gets the exception.
    lock.unlock();
    d.handle.destroy();
    throw;
  }
  ++unfinished_;  // counted before it can run (we hold the lock), so it cannot finish uncounted
  POOLS_TRACE_POST(this, POOLS_TRACE_ID(d.handle.address()));
  POOLS_TRACE_QUEUE_DEPTH(this, queue_.size());
  POOLS_TRACE_WAKE_ANY(this);
  wake_.notify_one();
}

void textbook_pool::finished() noexcept {
  std::lock_guard lock(mutex_);
  // The last one during shutdown: the threads sleeping on an empty queue may leave now.
  if (--unfinished_ == 0 && stopping_) wake_.notify_all();
}

// The body of post's coroutine: call the callable once. An exception leaves the body and goes to
// promise_type::unhandled_exception, which reports it.
textbook_pool::detached textbook_pool::run_detached(pools::unique_function<void()> f) {
  f();
  co_return;
}

}  // namespace pools::coroutines
