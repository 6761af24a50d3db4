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

// Bounded submission (thread_pool::set_capacity). A task admitted under a capacity holds a place
// in the pool's queue until it starts: these coroutines give the place back as their first act.
void place_left(thread_pool* pool) noexcept;  // thread_pool.cpp

template <class F>
posted_coroutine run_admitted_callable(F f, thread_pool* pool) {
  place_left(pool);
  // An exception goes to the promise's unhandled_exception(), which reports it. (Not through
  // invoke_reporting: a second caller of invoke_reporting<F> stops GCC inlining it into
  // run_posted, the unbounded post's hot path.)
  f();
  co_return;
}

template <class T>
task<void> run_admitted_task(task<T> t, thread_pool* pool) {
  place_left(pool);
  co_await std::move(t);  // its exception leaves this detached task: reported, as spawn's policy says
}

/// One submission waiting for room (thread_pool::wait_for_place, spawn_awaiter), in the pool's
/// FIFO of waiters under its room mutex. Lives on the waiting thread's stack or in the awaiting
/// coroutine's frame.
struct room_waiter {
  enum class state : unsigned char { waiting, admitted, closed };
  room_waiter* next = nullptr;
  state st = state::waiting;
  bool waited = false;                // it was queued: counted in the pool's room_pending_ until done
  std::coroutine_handle<> coroutine;  // a suspended coroutine, resumed on `resume_on`; or null:
  scheduler* resume_on = nullptr;
  std::condition_variable* blocked = nullptr;  // a blocked thread, woken through this
};
}  // namespace detail

/// What a wait for room in a bounded thread_pool throws when the pool's destructor begins (see
/// thread_pool::set_capacity): the submission was not made; what it carried is destroyed unrun.
class pool_closed : public std::runtime_error {
 public:
  pool_closed() : std::runtime_error("pools::coroutines::thread_pool: destroyed while waiting for room") {}
};

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
  /// With a capacity set, waits for room first (see "Bounded submission" below).
  template <class F>
  void post(F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "post: f must be callable as f()");
    if (capacity_.load(std::memory_order_relaxed) != 0) [[unlikely]]
      return post_bounded(std::forward<F>(f));
    auto h = detail::run_posted<std::decay_t<F>>(std::forward<F>(f)).handle;
    h.promise().pool = this;
    start_counted(h);
  }

  /// Detaches `t` onto the pool. The pool owns its frame and frees it when the task finishes.
  /// Policy: the result is discarded; an exception is handed to pools::report_unhandled_exception
  /// (as for post); the destructor waits for the task. Throws std::invalid_argument for an empty
  /// or already finished task. With a capacity set, waits for room first (below).
  template <class T>
  void spawn(task<T> t) {
    check_spawnable(t);
    if (capacity_.load(std::memory_order_relaxed) != 0) [[unlikely]]
      return spawn_bounded(std::move(t));
    auto h = t.release();
    h.promise().set_detached(this);
    start_counted(h);  // on std::bad_alloc the task is destroyed, not run
  }

  /// A stack_task (stack_task.hpp) cannot be detached: its frame lives on its creator's stack of
  /// frames and is freed in order with the creator's other frames. The same holds for try_spawn
  /// and spawn_when_room.
  template <class T>
  void spawn(stack_task<T>&&) {
    static_assert(
        !std::is_same_v<T, T>,
        "pools::coroutines::stack_task cannot be spawned: its frame lives on its creator's stack of "
        "frames; co_await, fork or call it from a stack_task, or start it with sync_wait");
  }
  template <class T>
  bool try_spawn(stack_task<T>&&) {
    static_assert(
        !std::is_same_v<T, T>,
        "pools::coroutines::stack_task cannot be spawned: its frame lives on its creator's stack of "
        "frames; co_await, fork or call it from a stack_task, or start it with sync_wait");
    return false;
  }
  template <class T>
  void spawn_when_room(stack_task<T>&&) {
    static_assert(
        !std::is_same_v<T, T>,
        "pools::coroutines::stack_task cannot be spawned: its frame lives on its creator's stack of "
        "frames; co_await, fork or call it from a stack_task, or start it with sync_wait");
  }

  // ---- Bounded submission (back-pressure) ----------------------------------------------------
  // With a capacity set, at most that many *new detached tasks* wait to start: those of post and
  // spawn (and their try_ and when_room forms), from any thread. A task holds its place from its
  // admission until a worker starts it; running and suspended tasks hold none. What continues
  // work already admitted never counts and never waits: forks (when_all, fork_scope), resumptions
  // (events, channels, mutexes, timers, I/O completions: enqueue), schedule(), sync_wait's entry.
  // A fork that waited for room would hold up its own join, and a resumption refused would lose
  // a coroutine; bounding the entry points bounds the work behind them.
  //   post / spawn        from outside the pool: block until there is room;
  //                       from a worker of this pool: never wait (accepted over the capacity:
  //                       a worker that waited would stop starting the tasks that make room).
  //   try_post / try_spawn  say no at once when full (from any thread; counted in stats().refused).
  //   co_await spawn_when_room(t)  suspends the calling coroutine, not its thread, until there is
  //                       room; the way for a coroutine, on any pool, to wait.
  // Waiters are admitted in arrival order. When the destructor begins, every wait for room from
  // outside the pool (a blocked thread, a coroutine of another pool) ends with pool_closed, and
  // so do such waits begun later; the task or callable is destroyed unrun. This pool's own
  // coroutines keep waiting their turn: what they spawn is work the drain runs. Capacity 0 (the
  // default) is unbounded: post and spawn then cost one relaxed load more than without it.

  /// Sets the capacity (0: unbounded). Waiters re-check at once. Lowering it below the number of
  /// queued tasks drops nothing: new submissions wait until fewer are queued.
  void set_capacity(std::size_t max_queued);
  std::size_t capacity() const noexcept { return capacity_.load(std::memory_order_relaxed); }
  /// Tasks admitted under a capacity that have not started yet (0 while unbounded).
  std::size_t queued() const noexcept {
    const std::int64_t q = queued_.load(std::memory_order_relaxed);
    return q > 0 ? static_cast<std::size_t>(q) : 0;
  }

  /// As post, but returns false at once, leaving `f` untouched, when the queue is full.
  template <class F>
  [[nodiscard]] bool try_post(F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "try_post: f must be callable as f()");
    if (capacity_.load(std::memory_order_relaxed) == 0) {
      post(std::forward<F>(f));
      return true;
    }
    if (!take_place(false)) return refuse();
    start_admitted([&] { return make_admitted(std::forward<F>(f)); });
    return true;
  }

  /// As spawn, but returns false at once, leaving `t` as it was (the caller still owns it), when
  /// the queue is full.
  template <class T>
  [[nodiscard]] bool try_spawn(task<T>&& t) {
    check_spawnable(t);
    if (capacity_.load(std::memory_order_relaxed) == 0) {
      spawn(std::move(t));
      return true;
    }
    if (!take_place(false)) return refuse();
    start_admitted([&] { return make_admitted_task(std::move(t)); });
    return true;
  }

  /// `co_await pool.spawn_when_room(t)`: spawns `t`, first suspending the calling coroutine while
  /// the queue is full. The coroutine resumes on the pool it suspended on (on this one when it
  /// ran on none), after `t` was admitted; or, from another pool, with pool_closed when the
  /// destructor begins.
  template <class T>
  class [[nodiscard]] spawn_awaiter {
   public:
    spawn_awaiter(thread_pool& pool, task<T> t) : pool_(pool), task_(std::move(t)) {}
    bool await_ready() {
      pool_.check_spawnable(task_);
      if (!pool_.try_admit_first()) return false;
      node_.st = detail::room_waiter::state::admitted;
      return true;
    }
    bool await_suspend(std::coroutine_handle<> h) {
      node_.coroutine = h;
      node_.resume_on = current_scheduler() != nullptr ? current_scheduler() : &pool_;
      return pool_.suspend_for_place(node_);
    }
    void await_resume() {
      if (node_.st == detail::room_waiter::state::closed) throw pool_closed();
      const auto make = [&] { return pool_.make_admitted_task(std::move(task_)); };
      if (!node_.waited) return pool_.start_admitted(make);
      const room_leaver left{pool_};
      pool_.start_admitted(make);
    }

   private:
    thread_pool& pool_;
    task<T> task_;
    detail::room_waiter node_;
  };
  template <class T>
  spawn_awaiter<T> spawn_when_room(task<T> t) {
    return spawn_awaiter<T>(*this, std::move(t));
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
    std::uint64_t refused = 0;   // try_post / try_spawn that said no (bounded submission)
    std::uint64_t waited = 0;    // submissions that had to wait for room (blocked or suspended)
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

  // ---- bounded submission (the public part above says what counts; thread_pool.cpp, "Room") ----
  template <class T>
  static void check_spawnable(const task<T>& t) {
    if (!t.valid() || t.is_ready())
      throw std::invalid_argument("pools::coroutines::thread_pool::spawn: empty or finished task");
  }
  /// The coroutine of an admitted callable or task: it gives its place back when it starts.
  template <class F>
  std::coroutine_handle<> make_admitted(F&& f) {
    auto h = detail::run_admitted_callable<std::decay_t<F>>(std::forward<F>(f), this).handle;
    h.promise().pool = this;
    return h;
  }
  template <class T>
  std::coroutine_handle<> make_admitted_task(task<T>&& t) {
    auto h = detail::run_admitted_task(std::move(t), this).release();
    h.promise().set_detached(this);
    return h;
  }
  /// A place is held: make the coroutine and start it. If either throws, the place is given back.
  template <class Make>
  void start_admitted(Make&& make) {
    try {
      start_counted(make());
    } catch (...) {
      place_left();
      throw;
    }
  }
  /// Takes a place if the queue has room (or always, with `force`): true when taken.
  bool take_place(bool force) noexcept;
  /// As take_place(false), but only when nobody waits (waiters are admitted in order).
  bool try_admit_first() noexcept;
  /// post/spawn with a capacity: a worker of this pool takes a place at once (force); any other
  /// thread blocks until it has one. Throws pool_closed when the destructor begins. True when it
  /// waited: the caller then calls leave_room() once the task has started (or failed to).
  bool admit_or_wait();
  // Out of line: the unbounded post and spawn keep their short paths (bench/instructions.py).
  template <class F>
  [[gnu::noinline]] void post_bounded(F&& f) {
    submit_bounded([&] { return make_admitted(std::forward<F>(f)); });
  }
  template <class T>
  [[gnu::noinline]] void spawn_bounded(task<T>&& t) {
    submit_bounded([&] { return make_admitted_task(std::move(t)); });
  }
  template <class Make>
  void submit_bounded(Make&& make) {
    if (!admit_or_wait()) return start_admitted(make);
    const room_leaver left{*this};
    start_admitted(make);
  }
  /// spawn_when_room: enlists `node` (true: suspend), or admits or closes it at once (false).
  bool suspend_for_place(detail::room_waiter& node);
  /// Under room_mutex_: queues `node`; true (and not queued) if it was admitted at once.
  bool enlist(detail::room_waiter& node);
  /// A waiter admitted after a wait has started its task (or failed to), or a closed thread
  /// leaves; the destructor may be waiting for it (close_room()).
  void leave_room();
  void leave_room_locked() noexcept;
  struct room_leaver {
    thread_pool& pool;
    ~room_leaver() { pool.leave_room(); }
  };
  /// A task admitted under a capacity started (or never will): its place is free again.
  void place_left() noexcept;
  friend void detail::place_left(thread_pool*) noexcept;
  /// Under room_mutex_: gives free places to waiters in order; returns the coroutines to resume.
  detail::room_waiter* hand_places() noexcept;
  void resume_waiters(detail::room_waiter* list) noexcept;
  /// The destructor's first step: ends every wait for room from outside with pool_closed, and
  /// waits for the remaining waiters to start their tasks.
  void close_room();
  bool refuse() noexcept {
    refused_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    return false;
  }

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
  // set_capacity(); 0: unbounded. Read by every post and spawn, written rarely: beside the
  // read-only members, away from the counters.
  std::atomic<std::size_t> capacity_{0};
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

  // Bounded submission (thread_pool.cpp, "Room"). queued_: places taken and not yet given back
  // (a signed count: a place is given back by the task that took it, on any worker).
  // room_waiters_: the length of the waiters' FIFO, changed under room_mutex_ and read without
  // it by place_left(), which only needs to know whether anyone waits.
  alignas(64) std::atomic<std::int64_t> queued_{0};
  std::atomic<std::size_t> room_waiters_{0};
  std::atomic<std::uint64_t> refused_{0}, waited_{0};
  std::mutex room_mutex_;
  detail::room_waiter* room_head_ = nullptr;  // the FIFO of waiters, under room_mutex_
  detail::room_waiter* room_tail_ = nullptr;
  // Under room_mutex_: waiters that waited and are not done: queued, or admitted with their task
  // not yet started. The destructor waits for 0 (close_room()).
  std::size_t room_pending_ = 0;
  bool room_closed_ = false;                // the destructor began, under room_mutex_
  std::condition_variable room_closed_cv_;  // the destructor waits for room_pending_ == 0

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
