// SPDX-License-Identifier: MIT
// pools/coroutines/thread_pool.hpp — the work-stealing pool that runs coroutines.
//
//   pools::coroutines::thread_pool pool(4);
//   int v = sync_wait(pool, compute());        // from main: run a task, block for its result
//   pool.spawn(background());                  // detached; counted; the destructor waits for it
//   pool.post([] { ... });                     // pools::Executor: a plain callable
//   co_await pool.schedule();                  // inside a coroutine: continue on a worker
//
// How a coroutine gets onto a worker: its handle goes into a queue — the current worker's own
// Chase–Lev deque when the caller is a worker of this pool (no lock, no CAS), else the injection
// queue (a two-lock FIFO, for the outside world). Workers run their own deque newest-first;
// when it is empty they take timers that are due, then the injection queue, then steal the
// oldest item of a random victim's deque. When nothing is found they spin briefly, then park.
//
// Parking cannot lose a wake-up. The handshake (thread_pool.cpp, README "Parking"):
//   worker:    parked = 1; set my bit in idle_; seq_cst fence; look for work once more; sleep
//              on `parked` (futex) unless work was found.
//   submitter: publish the work; seq_cst fence; if some bit is set in idle_, clear one (CAS),
//              store parked = 0 for that worker and futex-wake it.
// With a park_hook (pools/park_hook.hpp) the sleep and the wake are the hook's instead of the
// futex's — an I/O loop the idle worker runs — and the protocol around them is unchanged.
// The two fences make it a store-buffering pattern: at least one side sees the other's store,
// so either the worker finds the work or the submitter finds the worker. Work pushed by a worker
// onto its *own* deque is the exception: the owner itself is awake and will run it, so progress
// never depends on a wake there, and the push only does a fence-free check that wakes a sleeper
// for parallelism when no other worker is already searching.
// A submitter that sees a worker searching skips its wake; so the last searcher to find work (it
// may be other work) wakes a parked worker, which starts as a searcher (Tokio's rule; README,
// "Parking").
//
// Destruction drains: it waits until every posted and spawned task (and whatever they spawn or
// post meanwhile) has finished, then stops and joins the workers. A spawned task suspended
// forever (on an event nobody sets) therefore blocks the destructor: that is a bug in the program,
// as for a thread never joined. Do not destroy a pool from one of its own tasks.
#pragma once

#include <pools/coroutines/detail/timer_queue.hpp>
#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/executor.hpp>
#include <pools/park_hook.hpp>
#include <pools/trace.hpp>
#include <pools/two_lock_queue.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <bit>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools::coroutines {

namespace detail {
// The coroutine a posted callable runs in: detached, counted, destroys itself when done.
struct posted_coroutine {
  struct promise_type : recycled_frame {
    thread_pool* pool = nullptr;
    posted_coroutine get_return_object() noexcept {
      return {std::coroutine_handle<promise_type>::from_promise(*this)};
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    struct final_awaiter {
      bool await_ready() const noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
        // The callable's exception was reported inside the body (invoke_reporting).
        return finish_detached(self, self.promise().pool, nullptr);
      }
      void await_resume() const noexcept {}
    };
    final_awaiter final_suspend() const noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { report_unhandled_exception(std::current_exception()); }
  };
  std::coroutine_handle<promise_type> handle;
};

template <class F>
posted_coroutine run_posted(F f) {
  invoke_reporting(f);
  co_return;
}
}  // namespace detail

class thread_pool final : public scheduler {
 public:
  /// Starts `threads` workers; 0 means one per hardware thread (pools/thread_count.hpp).
  explicit thread_pool(std::size_t threads = std::thread::hardware_concurrency())
      : thread_pool(threads, nullptr) {}
  /// Idle workers wait in `hook` (pools/park_hook.hpp) instead of on a futex: a server's
  /// event loop, which they then run. `hook` must outlive the pool.
  thread_pool(std::size_t threads, pools::park_hook& hook) : thread_pool(threads, &hook) {}
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  /// Drains (see the header comment), then joins the workers.
  ~thread_pool();

  std::size_t concurrency() const noexcept { return workers_.size(); }

  /// pools::Executor: runs f() once on a worker; an exception goes to report_unhandled_exception.
  template <class F>
  void post(F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "post: f must be callable as f()");
    auto h = detail::run_posted<std::decay_t<F>>(std::forward<F>(f)).handle;
    h.promise().pool = this;
    start_counted(h);
  }

  /// Detaches `t` onto the pool. The pool owns its frame and frees it when the task finishes.
  /// Policy: the result is discarded; an exception is handed to pools::report_unhandled_exception
  /// (as for post); the destructor waits for the task. Throws std::invalid_argument for an empty
  /// or already finished task.
  template <class T>
  void spawn(task<T> t) {
    if (!t.valid() || t.is_ready())
      throw std::invalid_argument("pools::coroutines::thread_pool::spawn: empty or finished task");
    auto h = t.release();
    h.promise().set_detached(this);
    start_counted(h);  // on std::bad_alloc the task is destroyed, not run
  }

  struct schedule_awaiter {
    thread_pool* pool;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { pool->inject(h); }
    void await_resume() const noexcept {}
  };
  /// `co_await pool.schedule()` suspends and resumes the coroutine on a worker of this pool. It
  /// always goes through the injection queue, which is FIFO: from outside the pool that is how a
  /// coroutine enters it; on a worker it is a yield behind the work already queued there (the
  /// worker's own deque is LIFO, so re-pushing there would just resume the coroutine again).
  schedule_awaiter schedule() noexcept { return {this}; }

  // on_worker_thread(): inherited from scheduler (true on a worker thread of this pool).

  /// Makes the suspended coroutine `h` runnable again (for awaitables that resume coroutines):
  /// from a completion the park hook runs, onto that worker's FIFO of I/O wake-ups; on another
  /// occasion on one of this pool's workers, onto its deque; on any other thread, onto the
  /// injection queue. (`final`: a call on a thread_pool& is direct, not virtual.)
  void enqueue(std::coroutine_handle<> h) override {
    detail::worker* w = own_worker();
    if (w != nullptr && w->in_hook) {
      w->io_ready.push(h.address());  // the owner is awake, in the hook: its loop takes it next
      POOLS_TRACE_POST(this, POOLS_TRACE_ID(h.address()));
    } else {
      start(h, w);
    }
  }

  /// Fork: pushes `h` onto the deque of the calling worker `w` (which must belong to this pool):
  /// a child (when_all, help-first), or with `continuation` a parent suspended at a fork
  /// (fork_scope, work-first; the trace tells a thief's steals of the two kinds apart).
  void push_local(detail::worker& w, std::coroutine_handle<> h, [[maybe_unused]] bool continuation = false) {
    w.deque.push(h.address());
    POOLS_TRACE_POST_KIND(this, POOLS_TRACE_ID(h.address()), continuation);
    // Inside the hook, w may be the searcher wake_hint() counts on (a poll from its spin loop)
    // or still carry its idle bit (a park): either would make the hint wake no one. So wake
    // another worker directly; pushes from inside the hook are rare.
    if (w.in_hook)
      wake_one(w.index);
    else
      wake_hint();
  }

  /// Resumes `h` at or after `deadline` (the machinery of sleep_until).
  void add_timer(std::chrono::steady_clock::time_point deadline, std::coroutine_handle<> h);

  /// Counters since construction (for tests and the README's discussion).
  struct statistics {
    std::uint64_t steals = 0;    // items taken from another worker's deque
    std::uint64_t parks = 0;     // times a worker went to sleep
    std::uint64_t wakes = 0;     // futex wakes issued
    std::uint64_t injected = 0;  // items taken from the injection queue
  };
  statistics stats() const noexcept;

 private:
  /// The worker of this pool running on the calling thread, or nullptr (another pool's worker,
  /// or not a worker at all).
  detail::worker* own_worker() const noexcept {
    detail::worker* w = detail::tl_worker;
    return w != nullptr && w->pool == this ? w : nullptr;
  }

  /// New work (post, spawn), from the calling thread whose own_worker() is `w`: onto that
  /// worker's deque, where idle workers can steal it, or the injection queue. Unlike enqueue(),
  /// never onto the FIFO of I/O wake-ups, even from inside the park hook: that FIFO is its
  /// worker's alone.
  void start(std::coroutine_handle<> h, detail::worker* w) {
    if (w != nullptr) {
      push_local(*w, h);
    } else {
      inject(h);
    }
  }

  /// New detached work (post, spawn): counted for the drain, then started. If the start throws
  /// (std::bad_alloc from the injection queue or a growing deque), the task is counted as finished
  /// too and the coroutine, which nobody else has seen, is destroyed; the caller gets the exception.
  void start_counted(std::coroutine_handle<> h) {
    // Counted where the caller is: a worker of this pool in its own counter (only it writes
    // it), any other thread in started_outside_. relaxed both: the release with which the push
    // or the injection publishes the coroutine also publishes the count to whoever runs, and so
    // finishes, it.
    detail::worker* w = own_worker();
    if (w != nullptr) {
      w->started.store(w->started.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      started_outside_.fetch_add(1, std::memory_order_relaxed);
    }
    try {
      start(h, w);
    } catch (...) {
      h.destroy();
      task_finished();  // as if it had run: a drain waiting for the count is told
      throw;
    }
  }

  friend void detail::detached_done(thread_pool*) noexcept;

  thread_pool(std::size_t threads, pools::park_hook* hook);

  void worker_main(detail::worker& w);
  bool find_remote(detail::worker& w, void*& out);
  bool take_timers(detail::worker& w, void*& out);
  bool take_injected(detail::worker& w, void*& out);
  bool steal(detail::worker& w, void*& out);
  // woken: a waker chose this worker (it starts searching); returned: a timer, or the park hook
  // returned early.
  enum class park_result { found_work, woken, returned, stop };
  park_result park(detail::worker& w, void*& out, bool last_searcher);
  /// Runs the park hook's ready completions on worker `w` (owner only; no-op without a hook).
  void poll_hook(detail::worker& w);
  void inject(std::coroutine_handle<> h);
  class submitter;  // counts a thread in inject() / add_timer() (thread_pool.cpp)
  void set_idle(unsigned index) noexcept;
  bool clear_idle(unsigned index) noexcept;
  static constexpr std::size_t no_worker = ~std::size_t{0};
  /// Wakes one parked worker other than `skip`; false if there is none.
  bool wake_one(std::size_t skip = no_worker) noexcept;
  /// After publishing work for others (inject, add_timer, a batch onto the own deque): seq_cst
  /// fence, then wake a parked worker unless one is searching.
  void wake_for_new_work() noexcept;
  /// A searcher that found work and was the last one, or a chosen worker that found other work:
  /// wakes a parked worker to search in its place if work is left (seq_cst fence, then check).
  void wake_searcher() noexcept;
  /// After a seq_cst fence: is some worker parked / is there queued work a parked worker could
  /// take (injection queue, a pending timer, any deque)?
  bool any_idle() const noexcept;
  bool work_visible() const noexcept;
  void wake_all() noexcept;
  /// A detached task ended (or never started): one more finished, told to a waiting drain.
  void task_finished() noexcept;
  /// The drain's predicate: every detached task started so far has finished.
  bool all_finished() const noexcept;

  // Fence-free: called after every fork (local push). Wakes a parked worker only when one exists
  // and no worker is already searching (that one will find the item, or pass the search on:
  // wake_searcher()). Stale reads cost parallelism, never progress: the pushing worker runs its
  // own deque. Work other threads submitted takes wake_for_new_work() instead, with its fence.
  void wake_hint() noexcept {
    // relaxed both: a heuristic (see above); wake_one() itself is exact.
    if (searching_.load(std::memory_order_relaxed) != 0) return;
    for (const auto& word : idle_) {
      if (word.load(std::memory_order_relaxed) != 0) {
        wake_one();
        return;
      }
    }
  }
  /// The bit of worker `skip` in word k of idle_, or 0.
  static std::uint64_t skip_mask(std::size_t k, std::size_t skip) noexcept {
    return skip != no_worker && skip / 64 == k ? std::uint64_t{1} << (skip % 64) : 0;
  }

  pools::park_hook* const hook_;  // nullptr: workers sleep on their futex
  std::vector<std::unique_ptr<detail::worker>> workers_;
  std::vector<std::thread> threads_;

  // Bit i of idle_[i / 64] is set while worker i is parked or about to park.
  std::vector<std::atomic<std::uint64_t>> idle_;

  alignas(64) std::atomic<std::uint32_t> searching_{0};  // workers spinning for work

  // The injection queue: submissions from threads that are not workers of this pool. The
  // futures pool's two-lock queue (pools/two_lock_queue.hpp): a poster locks only the tail, a
  // worker taking a batch only the head, and a queue in steady state allocates nothing. (Before:
  // a std::deque under one lock; docs/results/history/coroutines.md, "the searching hole".)
  pools::two_lock_queue<void*> injected_;
  // Threads inside inject() or add_timer(): the destructor waits for 0 (see there).
  std::atomic<std::uint32_t> submitters_{0};

  detail::timer_queue timers_;

  // Draining: detached tasks (post, spawn) started and finished, counted apart. One shared
  // count of tasks in flight would be written by the poster on every post and by a worker on
  // every finish, one cache line bouncing between them (docs/results/history/coroutines.md).
  // Workers count in their own worker::started and worker::finished; other threads here, each
  // count on its own line so that a poster outside the pool and a task finishing outside it do
  // not share one either.
  alignas(64) std::atomic<std::int64_t> started_outside_{0};
  alignas(64) std::atomic<std::int64_t> finished_outside_{0};
  // Read on every finish, written once: on a line of their own, away from the counts above.
  alignas(64) std::atomic<bool> draining_{false};
  std::atomic<bool> stopping_{false};
  std::mutex drain_mutex_;
  std::condition_variable drain_cv_;

  // Statistics, relaxed counters: off the hot path (steals, parks, wakes, injections).
  std::atomic<std::uint64_t> steals_{0}, parks_{0}, wakes_{0}, injected_count_{0};

  // With a park hook (thread_pool.cpp says why): due timers into the ready FIFO; the tick's item.
  bool queue_ready_timers(detail::worker& w, const std::coroutine_handle<>* due, std::size_t n, bool more);
  bool take_tick_item(detail::worker& w, void*& out);

 public:
  // Cancellable timers (the machinery of a sleep under a stop token: sleep.hpp). std::stop_token
  // comes with task.hpp.
  /// As add_timer, unless `stop` is already stopped (then false, and `h` is not queued). The
  /// timer's id goes into `id`, for cancel_timer.
  bool add_cancellable_timer(std::chrono::steady_clock::time_point deadline, std::coroutine_handle<> h,
                             const std::stop_token& stop, std::uint64_t& id);
  /// Takes the timer `id` back: true when it had not fired (the caller resumes its coroutine),
  /// false when a worker has taken it (that worker resumes it).
  bool cancel_timer(const std::uint64_t& id) noexcept { return timers_.cancel(id); }
};

static_assert(pools::Executor<thread_pool>);

}  // namespace pools::coroutines
