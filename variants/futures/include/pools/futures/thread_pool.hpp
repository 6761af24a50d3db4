// SPDX-License-Identifier: MIT
// pools/futures/thread_pool.hpp — the futures pool: a fixed set of worker threads, one shared
// FIFO queue, std::future for results. The API follows BS::thread_pool v5 name for name.
//
//   pools::futures::thread_pool pool(4);
//   std::future<int> f = pool.submit_task([](int a, int b) { return a * b; }, 6, 7);
//   pool.detach_loop(0, n, [&](int i) { out[i] = work(i); });
//   pool.wait();
//   int answer = f.get();
//
// Design in one paragraph (README.md has the diagrams): tasks go into a two-lock FIFO
// (pools/two_lock_queue.hpp, shared with the coroutine pool) so producers and workers do not
// share a lock. A worker that finds no
// work spins briefly, then sleeps on a condition variable; a producer wakes a worker only when
// one is actually asleep, which it learns from an atomic count of sleepers, so a busy pool
// posts without any system call. Every task is stored inline in a 32-byte pools::task_function:
// posting a small lambda allocates nothing, and submit_task moves a std::packaged_task (16
// bytes) into it, so a future costs the two allocations std::future itself needs and no more.
//
// pools::Executor: post(f) is detach_task(f); concurrency() is get_thread_count(); the
// destructor drains (runs every queued task, including tasks those tasks post) — EXCEPT when the
// pool is paused: destroying a paused pool waits only for the running tasks and destroys the
// queued ones unrun (BS::thread_pool semantics; futures of dropped tasks report
// std::future_error(broken_promise)). An exception escaping a detached task goes to
// pools::report_unhandled_exception; an exception from a submitted task goes into its future.
//
// Never block a task on another task of the same pool (future.get(), a latch...) unless a free
// worker is guaranteed: every worker may end up waiting for a task that no worker is left to
// run. README.md, "Why nested waits deadlock", shows it happen (tests/nested_wait_test.cpp).
// wait() from inside a task of the same pool is detected and throws wait_deadlock.
#pragma once

#include <pools/cache_line.hpp>
#include <pools/cpu_relax.hpp>
#include <pools/executor.hpp>
#include <pools/futures/detail/shared_callable.hpp>
#include <pools/futures/index_type.hpp>
#include <pools/futures/multi_future.hpp>
#include <pools/futures/priority.hpp>
#include <pools/futures/priority_task_queue.hpp>
#include <pools/futures/this_thread.hpp>
#include <pools/index_blocks.hpp>
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>
#include <pools/two_lock_queue.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools::futures {

/// Thrown by wait(), wait_for() and wait_until() called from a task of the same pool: the pool
/// cannot become idle while the caller (one of its tasks) is still running.
class wait_deadlock : public std::logic_error {
 public:
  wait_deadlock()
      : std::logic_error(
            "pools::futures::thread_pool: wait() called from a task of the same pool; the pool cannot become "
            "idle while the calling task runs, so this would wait forever") {}
};

/// A task that takes a std::stop_token first, as std::jthread's function may: the pool passes
/// it the pool's stop token (request_stop(), get_stop_token()), then the task's arguments.
template <class F, class... A>
concept accepts_stop_token = std::invocable<std::decay_t<F>, std::stop_token, std::decay_t<A>...>;

/// What detach_task and submit_task accept: f(args...) or f(stop_token, args...).
template <class F, class... A>
concept pool_task = accepts_stop_token<F, A...> || std::invocable<std::decay_t<F>, std::decay_t<A>...>;

namespace detail {
// No `type` for what is not a pool_task, so that a wrong overload drops out of overload
// resolution instead of failing to compile (Clang looks at the return type before the
// requires-clause).
template <class F, class... A>
struct task_result {};
template <class F, class... A>
  requires accepts_stop_token<F, A...>
struct task_result<F, A...> {
  using type = std::invoke_result_t<std::decay_t<F>, std::stop_token, std::decay_t<A>...>;
};
template <class F, class... A>
  requires(!accepts_stop_token<F, A...> && std::invocable<std::decay_t<F>, std::decay_t<A>...>)
struct task_result<F, A...> {
  using type = std::invoke_result_t<std::decay_t<F>, std::decay_t<A>...>;
};
}  // namespace detail

/// A per-thread initialisation (or cleanup) function: f() or f(std::size_t worker_index).
template <class F>
concept thread_function = std::invocable<F&> || std::invocable<F&, std::size_t>;

template <tp::opt_t Options = tp::none>
class basic_thread_pool {
  static constexpr bool has_priority = (Options & tp::priority) != 0;
  using queue_type = std::conditional_t<has_priority, priority_task_queue, two_lock_queue<task_function>>;

  // Not std::common_type: for int and unsigned that is unsigned, and a loop from -5 to 10u would
  // run no iteration (index_type.hpp has the rule).
  template <class A, class B>
  using index_t = common_index_type_t<A, B>;

  template <class F, class... A>
  using result_t = typename detail::task_result<F, A...>::type;

 public:
  // ---- construction ----------------------------------------------------------------------

  /// std::thread::hardware_concurrency() workers (at least one).
  basic_thread_pool() : basic_thread_pool(0) {}

  /// `threads` workers; 0 means std::thread::hardware_concurrency(). Throws
  /// std::invalid_argument above 65,536 threads, and std::system_error if a thread cannot be
  /// started (the ones already started are stopped first).
  explicit basic_thread_pool(std::size_t threads) { start_workers(determine_thread_count(threads)); }

  /// As above; every worker runs init() or init(index) once, before its first task. An
  /// exception from init goes to pools::report_unhandled_exception; the worker then starts.
  /// Each init counts as a running task until it returns (as in BS::thread_pool), so wait()
  /// called right after construction returns only once every worker's init has run.
  template <thread_function F>
  basic_thread_pool(std::size_t threads, F&& init) : init_(as_thread_function(std::forward<F>(init))) {
    start_workers(determine_thread_count(threads));
  }

  /// hardware_concurrency() workers, each running init() or init(index) first.
  template <thread_function F>
  explicit basic_thread_pool(F&& init) : basic_thread_pool(0, std::forward<F>(init)) {}

  basic_thread_pool(const basic_thread_pool&) = delete;
  basic_thread_pool& operator=(const basic_thread_pool&) = delete;

  /// Drains, then joins the workers: every queued task runs, including tasks posted by tasks
  /// meanwhile. If the pool is paused, only the running tasks finish and the queued ones are
  /// destroyed unrun (futures report broken_promise). Must not be called from a task of this pool.
  ~basic_thread_pool() { stop_workers(); }

  /// Number of worker threads.
  std::size_t get_thread_count() const noexcept { return thread_count_.load(std::memory_order_relaxed); }

  /// The workers' thread ids, in index order.
  std::vector<std::thread::id> get_thread_ids() const {
    std::lock_guard lock(config_mutex_);
    std::vector<std::thread::id> ids;
    ids.reserve(threads_.size());
    for (const auto& t : threads_) ids.push_back(t.get_id());
    return ids;
  }

  /// The workers' native handles (pthread_t on Linux), in index order, for the system calls the
  /// pool does not wrap: pools/futures/native.hpp sets names, affinity and priorities of the
  /// calling thread; an init function is the place to call those. The handles are valid until
  /// the next reset() or the destructor.
  std::vector<std::thread::native_handle_type> get_native_handles() {
    std::lock_guard lock(config_mutex_);
    std::vector<std::thread::native_handle_type> handles;
    handles.reserve(threads_.size());
    for (auto& t : threads_) handles.push_back(t.native_handle());
    return handles;
  }

  /// Waits for the running tasks to finish, replaces the workers with `threads` new ones (0 =
  /// hardware concurrency) and goes on. Queued tasks stay queued and run on the new workers; the
  /// paused state is kept; the init function is kept unless a new one is given. Throws
  /// std::logic_error when called from a task of this pool (it would wait for itself). As after
  /// construction, the new workers' inits count as running tasks until they return.
  void reset() { reset(0); }
  void reset(std::size_t threads) { reset_impl(threads, nullptr, false); }
  template <thread_function F>
  void reset(F&& init) {
    reset(0, std::forward<F>(init));
  }
  template <thread_function F>
  void reset(std::size_t threads, F&& init) {
    reset_impl(threads, as_thread_function(std::forward<F>(init)), true);
  }

  /// Sets a function every worker runs when it exits (BS: set_cleanup_func). Exceptions are
  /// reported, like init's.
  template <thread_function F>
  void set_cleanup_func(F&& cleanup) {
    std::lock_guard lock(config_mutex_);
    cleanup_ = as_thread_function(std::forward<F>(cleanup));
  }

  // ---- single tasks ----------------------------------------------------------------------

  /// Queues f(args...) with no way to get its result. f and args are decay-copied and f is
  /// invoked once, as an rvalue (like std::async). An exception it throws goes to
  /// pools::report_unhandled_exception.
  template <class F, class... A>
    requires pool_task<F, A...>
  void detach_task(F&& f, A&&... args) {
    enqueue(pr::normal, task_function(invoker(std::forward<F>(f), std::forward<A>(args)...)));
  }
  template <class F, class... A>
    requires has_priority && pool_task<F, A...>
  void detach_task(priority_t priority, F&& f, A&&... args) {
    enqueue(priority, task_function(invoker(std::forward<F>(f), std::forward<A>(args)...)));
  }

  /// Queues f(args...) and returns the future of its result; an exception it throws is stored
  /// in the future and rethrown by get().
  template <class F, class... A>
    requires pool_task<F, A...>
  [[nodiscard]] std::future<result_t<F, A...>> submit_task(F&& f, A&&... args) {
    return submit_impl(pr::normal, std::forward<F>(f), std::forward<A>(args)...);
  }
  template <class F, class... A>
    requires has_priority && pool_task<F, A...>
  [[nodiscard]] std::future<result_t<F, A...>> submit_task(priority_t priority, F&& f, A&&... args) {
    return submit_impl(priority, std::forward<F>(f), std::forward<A>(args)...);
  }

  // ---- bulk submission (BS::thread_pool v5.1) ---------------------------------------------
  // Every callable of an iterator range or a range (a container, an array) becomes a task of its
  // own; each is moved out of the range, so the range holds moved-from callables afterwards. The
  // callables take no arguments (wrap arguments in a lambda), and submit_bulk needs them all to
  // return the same type.

  /// f() for every f in [first, last); exceptions go to pools::report_unhandled_exception.
  template <std::input_iterator I, std::sentinel_for<I> S>
    requires std::invocable<std::decay_t<std::iter_reference_t<I>>>
  void detach_bulk(I first, S last) {
    for (; first != last; ++first) enqueue(pr::normal, bind(std::move(*first)));
  }
  template <std::ranges::input_range R>
    requires std::invocable<std::decay_t<std::ranges::range_reference_t<R>>>
  void detach_bulk(R& range) {
    detach_bulk(std::ranges::begin(range), std::ranges::end(range));
  }
  template <std::input_iterator I, std::sentinel_for<I> S>
    requires has_priority && std::invocable<std::decay_t<std::iter_reference_t<I>>>
  void detach_bulk(priority_t priority, I first, S last) {
    for (; first != last; ++first) enqueue(priority, bind(std::move(*first)));
  }
  template <std::ranges::input_range R>
    requires has_priority && std::invocable<std::decay_t<std::ranges::range_reference_t<R>>>
  void detach_bulk(priority_t priority, R& range) {
    detach_bulk(priority, std::ranges::begin(range), std::ranges::end(range));
  }

  /// As detach_bulk, with one future per callable, in range order.
  template <std::input_iterator I, std::sentinel_for<I> S,
            class R = std::invoke_result_t<std::decay_t<std::iter_reference_t<I>>>>
  [[nodiscard]] multi_future<R> submit_bulk(I first, S last) {
    return submit_bulk_impl<R>(pr::normal, first, last);
  }
  template <std::ranges::input_range Range,
            class R = std::invoke_result_t<std::decay_t<std::ranges::range_reference_t<Range>>>>
  [[nodiscard]] multi_future<R> submit_bulk(Range& range) {
    return submit_bulk_impl<R>(pr::normal, std::ranges::begin(range), std::ranges::end(range));
  }
  template <std::input_iterator I, std::sentinel_for<I> S,
            class R = std::invoke_result_t<std::decay_t<std::iter_reference_t<I>>>>
    requires has_priority
  [[nodiscard]] multi_future<R> submit_bulk(priority_t priority, I first, S last) {
    return submit_bulk_impl<R>(priority, first, last);
  }
  template <std::ranges::input_range Range,
            class R = std::invoke_result_t<std::decay_t<std::ranges::range_reference_t<Range>>>>
    requires has_priority
  [[nodiscard]] multi_future<R> submit_bulk(priority_t priority, Range& range) {
    return submit_bulk_impl<R>(priority, std::ranges::begin(range), std::ranges::end(range));
  }

  // ---- loops -----------------------------------------------------------------------------
  // The range is half-open, [first, last), of any integer types (their common type is used);
  // an empty or reversed range queues nothing. It is split with pools::index_blocks, exactly
  // like pools::parallel_for: `blocks` near-equal blocks (0 = get_thread_count()), never more
  // blocks than indices, sizes differing by at most one. The loop body is moved once into shared
  // storage and called as an lvalue by several workers at once: it must allow that.

  /// loop(i) for every index; one task per block.
  template <std::integral A, std::integral B, class F>
    requires std::invocable<std::decay_t<F>&, index_t<A, B>>
  void detach_loop(A first, B last, F&& loop, std::size_t blocks = 0) {
    loop_impl(pr::normal, first, last, std::forward<F>(loop), blocks);
  }
  template <std::integral A, std::integral B, class F>
    requires has_priority && std::invocable<std::decay_t<F>&, index_t<A, B>>
  void detach_loop(priority_t priority, A first, B last, F&& loop, std::size_t blocks = 0) {
    loop_impl(priority, first, last, std::forward<F>(loop), blocks);
  }

  /// As detach_loop, with one future per block.
  template <std::integral A, std::integral B, class F>
    requires std::invocable<std::decay_t<F>&, index_t<A, B>>
  [[nodiscard]] multi_future<void> submit_loop(A first, B last, F&& loop, std::size_t blocks = 0) {
    return submit_loop_impl(pr::normal, first, last, std::forward<F>(loop), blocks);
  }
  template <std::integral A, std::integral B, class F>
    requires has_priority && std::invocable<std::decay_t<F>&, index_t<A, B>>
  [[nodiscard]] multi_future<void> submit_loop(priority_t priority, A first, B last, F&& loop,
                                               std::size_t blocks = 0) {
    return submit_loop_impl(priority, first, last, std::forward<F>(loop), blocks);
  }

  /// block(begin, end) for every block.
  template <std::integral A, std::integral B, class F>
    requires std::invocable<std::decay_t<F>&, index_t<A, B>, index_t<A, B>>
  void detach_blocks(A first, B last, F&& block, std::size_t blocks = 0) {
    blocks_impl(pr::normal, first, last, std::forward<F>(block), blocks);
  }
  template <std::integral A, std::integral B, class F>
    requires has_priority && std::invocable<std::decay_t<F>&, index_t<A, B>, index_t<A, B>>
  void detach_blocks(priority_t priority, A first, B last, F&& block, std::size_t blocks = 0) {
    blocks_impl(priority, first, last, std::forward<F>(block), blocks);
  }

  /// As detach_blocks; the futures hold each block's result, in block order.
  template <std::integral A, std::integral B, class F, class I = index_t<A, B>>
    requires std::invocable<std::decay_t<F>&, I, I>
  [[nodiscard]] multi_future<std::invoke_result_t<std::decay_t<F>&, I, I>> submit_blocks(
      A first, B last, F&& block, std::size_t blocks = 0) {
    return submit_blocks_impl(pr::normal, first, last, std::forward<F>(block), blocks);
  }
  template <std::integral A, std::integral B, class F, class I = index_t<A, B>>
    requires has_priority && std::invocable<std::decay_t<F>&, I, I>
  [[nodiscard]] multi_future<std::invoke_result_t<std::decay_t<F>&, I, I>> submit_blocks(
      priority_t priority, A first, B last, F&& block, std::size_t blocks = 0) {
    return submit_blocks_impl(priority, first, last, std::forward<F>(block), blocks);
  }

  /// seq(i) for every index, one task per index.
  template <std::integral A, std::integral B, class F>
    requires std::invocable<std::decay_t<F>&, index_t<A, B>>
  void detach_sequence(A first, B last, F&& seq) {
    sequence_impl(pr::normal, first, last, std::forward<F>(seq));
  }
  template <std::integral A, std::integral B, class F>
    requires has_priority && std::invocable<std::decay_t<F>&, index_t<A, B>>
  void detach_sequence(priority_t priority, A first, B last, F&& seq) {
    sequence_impl(priority, first, last, std::forward<F>(seq));
  }

  /// As detach_sequence; one future per index, in index order.
  template <std::integral A, std::integral B, class F, class I = index_t<A, B>>
    requires std::invocable<std::decay_t<F>&, I>
  [[nodiscard]] multi_future<std::invoke_result_t<std::decay_t<F>&, I>> submit_sequence(A first, B last,
                                                                                        F&& seq) {
    return submit_sequence_impl(pr::normal, first, last, std::forward<F>(seq));
  }
  template <std::integral A, std::integral B, class F, class I = index_t<A, B>>
    requires has_priority && std::invocable<std::decay_t<F>&, I>
  [[nodiscard]] multi_future<std::invoke_result_t<std::decay_t<F>&, I>> submit_sequence(priority_t priority,
                                                                                        A first, B last,
                                                                                        F&& seq) {
    return submit_sequence_impl(priority, first, last, std::forward<F>(seq));
  }

  // ---- waiting ---------------------------------------------------------------------------

  /// Blocks until no task is queued or running (while paused: until no task is running).
  /// Throws wait_deadlock when called from a task of this pool.
  void wait() {
    refuse_if_own_task();
    std::unique_lock lock(wait_mutex_);
    const waiter_registration registered(waiters_);
    wait_cv_.wait(lock, [this] { return idle_for_waiters(); });
  }

  /// As wait(), giving up after `timeout`; true when the pool became idle.
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& timeout) {
    return wait_until(std::chrono::steady_clock::now() + timeout);
  }

  /// As wait(), giving up at `deadline`; true when the pool became idle.
  template <class Clock, class Duration>
  bool wait_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    refuse_if_own_task();
    std::unique_lock lock(wait_mutex_);
    const waiter_registration registered(waiters_);
    return wait_cv_.wait_until(lock, deadline, [this] { return idle_for_waiters(); });
  }

  // ---- monitoring and control ------------------------------------------------------------
  // The counts are snapshots: each is exact at the moment it was read. A task is counted as
  // queued until the worker that takes it counts it as running, both in one critical section,
  // so get_tasks_total() is always get_tasks_queued() + get_tasks_running() of one moment.

  std::size_t get_tasks_queued() const noexcept { return queue_.size(); }
  std::size_t get_tasks_running() const noexcept { return running_count(std::memory_order_acquire); }
  std::size_t get_tasks_total() const {
    return queue_.with_consumer_lock(
        [this] { return queue_.size() + running_count(std::memory_order_acquire); });
  }

  /// Workers finish their current tasks but start no new ones until unpause(). Once pause()
  /// returns, no task starts. While paused, wait() waits only for the running tasks, and
  /// destroying the pool drops the queued tasks.
  void pause() {
    set_hold(hold_paused, true);
    notify_waiters();  // a waiter may now be satisfied by "nothing running" alone
  }

  /// Lets the workers take tasks again.
  void unpause() {
    set_hold(hold_paused, false);
    wake_all();
  }

  bool is_paused() const noexcept { return (hold_.load(std::memory_order_acquire) & hold_paused) != 0; }

  /// Destroys every queued task unrun (running tasks are not affected) and returns how many.
  /// Futures of purged tasks report std::future_error(broken_promise).
  std::size_t purge() {
    std::size_t purged = 0;
    {
      std::vector<task_function> dropped = queue_.take_all();
      purged = dropped.size();
    }  // the tasks' destructors run here, outside every lock of the pool
    notify_waiters();
    notify_room_all();
    return purged;
  }

  // ---- stopping (std::stop_token) ----------------------------------------------------------
  // A task whose function takes a std::stop_token first (f(token, args...), as std::jthread's
  // may) is given the pool's token when it is queued. request_stop() stops the pool's current
  // work in one call: running tasks see stop requested on their token (and their
  // std::stop_callbacks run), and queued tasks are removed unrun. The pool stays usable: tasks
  // queued afterwards get a fresh token. A task queued concurrently with request_stop() may be
  // removed or may run (and, if it takes a token, may find it stopped): either way it is counted
  // once, as run or as removed.

  /// Requests stop on the current token, removes every queued task unrun and returns how many
  /// were removed; get_tasks_stopped() adds these counts up. A removed detached task is
  /// destroyed at once; a submitted one's future reports std::future_error(broken_promise), and
  /// its callable (kept in the future's shared state by std::packaged_task) goes with the future.
  std::size_t request_stop() {
    std::stop_source stopping;
    {
      const std::lock_guard lock(stop_mutex_);
      stopping = stop_source_;
    }
    stopping.request_stop();  // running tasks see it; callbacks run here, on this thread
    std::size_t removed = 0;
    {
      std::vector<task_function> dropped = queue_.take_all();
      removed = dropped.size();
    }  // the removed tasks' destructors run here, outside every lock of the pool
    {
      const std::lock_guard lock(stop_mutex_);
      stop_source_ = std::stop_source();  // what is queued from now on gets a fresh token
    }
    tasks_stopped_.fetch_add(removed, std::memory_order_relaxed);
    notify_waiters();
    notify_room_all();
    return removed;
  }

  /// The token the next queued task will get; stop is requested on it by request_stop(). Loop
  /// bodies and other code that should stop with the pool can capture it.
  std::stop_token get_stop_token() const {
    const std::lock_guard lock(stop_mutex_);
    return stop_source_.get_token();
  }

  /// How many queued tasks request_stop() has removed, over the pool's life.
  std::size_t get_tasks_stopped() const noexcept { return tasks_stopped_.load(std::memory_order_relaxed); }

  // ---- bounded submission (back-pressure) ---------------------------------------------------
  // With a capacity set, at most that many tasks wait in the queue (running ones do not count).
  // Every way of queuing a task (detach_task, submit_task, the loops, bulk, post) then *blocks*
  // until there is room, one task at a time, and the try_ calls say no instead of waiting. Two
  // exceptions, both to avoid deadlock: a task of this pool queuing more never waits (it is
  // accepted over the capacity: if every worker waited for room, nobody would make any), and a
  // paused pool makes no room until unpause(). 0, the default, is unbounded and costs the hot
  // path one relaxed load per task.

  /// Sets the capacity (0: unbounded). Producers waiting for room re-check at once. Lowering it
  /// below the current queue length drops nothing: producers wait until the queue is below it.
  void set_capacity(std::size_t max_queued) {
    capacity_.store(max_queued, std::memory_order_relaxed);
    notify_room_all();
  }
  std::size_t get_capacity() const noexcept { return capacity_.load(std::memory_order_relaxed); }

  /// Queues f(args...) if the queue has room and returns true; else returns false at once and the
  /// task is dropped unrun (the decay-copies of f and args are destroyed; what the caller passed
  /// by lvalue is untouched).
  template <class F, class... A>
    requires pool_task<F, A...>
  [[nodiscard]] bool try_detach_task(F&& f, A&&... args) {
    if (!has_room()) return false;  // cheap early no; the answer that counts is try_enqueue's
    task_function task(invoker(std::forward<F>(f), std::forward<A>(args)...));
    return try_enqueue(pr::normal, task);
  }

  /// As submit_task, or empty when the queue is full.
  template <class F, class... A>
    requires pool_task<F, A...>
  [[nodiscard]] std::optional<std::future<result_t<F, A...>>> try_submit_task(F&& f, A&&... args) {
    if (!has_room()) return std::nullopt;
    using R = result_t<F, A...>;
    std::packaged_task<R()> packaged(invoker(std::forward<F>(f), std::forward<A>(args)...));
    std::future<R> future = packaged.get_future();
    task_function task([t = std::move(packaged)]() mutable { t(); });
    if (!try_enqueue(pr::normal, task)) return std::nullopt;
    return future;
  }

  /// pools::Executor's post, refusing instead of waiting: try_detach_task(f).
  template <class F>
  [[nodiscard]] bool try_post(F&& f) {
    return try_detach_task(std::forward<F>(f));
  }

  // ---- pools::Executor -------------------------------------------------------------------

  template <class F>
  void post(F&& f) {
    detach_task(std::forward<F>(f));
  }
  std::size_t concurrency() const noexcept { return get_thread_count(); }

 private:
  // A request beyond this is a bug (a negative number converted to size_t, say), not a pool size.
  static constexpr std::size_t max_threads = std::size_t{1} << 16U;

  static constexpr std::uint8_t hold_paused = 1;     // pause()
  static constexpr std::uint8_t hold_resetting = 2;  // reset() is replacing the workers

  // An idle worker re-checks the queue this many times before it sleeps: the first rounds with
  // the CPU's pause hint (a task posted within ~a microsecond is taken without any system call),
  // the rest yielding the core, which matters when the poster shares the machine's cores with
  // the workers.
  static constexpr unsigned spin_pause_rounds = 64;
  static constexpr unsigned spin_yield_rounds = 16;

  static std::size_t determine_thread_count(std::size_t requested) {
    if (requested > max_threads) {
      throw std::invalid_argument("pools::futures::thread_pool: " + std::to_string(requested) +
                                  " threads requested, at most " + std::to_string(max_threads) +
                                  " are allowed");
    }
    return pools::thread_count(requested);  // 0: one per hardware thread, as in every pool
  }

  template <class F>
  static std::function<void(std::size_t)> as_thread_function(F&& f) {
    if constexpr (std::invocable<F&, std::size_t>) {
      return std::function<void(std::size_t)>(std::forward<F>(f));
    } else {
      return [g = std::forward<F>(f)](std::size_t) mutable { g(); };
    }
  }

  // f(args...) as a task_function invoking decay-copies once, as rvalues. Without arguments the
  // wrapper is as big as f itself, so a small lambda stays in the inline buffer.
  template <class F, class... A>
  static auto bind_invoker(F&& f, A&&... args) {
    if constexpr (sizeof...(A) == 0) {
      return [fn = std::decay_t<F>(std::forward<F>(f))]() mutable -> decltype(auto) {
        return std::invoke(std::move(fn));
      };
    } else {
      return [fn = std::decay_t<F>(std::forward<F>(f)),
              bound = std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)]() mutable -> decltype(auto) {
        return std::apply(std::move(fn), std::move(bound));
      };
    }
  }
  // bind_invoker, with the pool's current stop token as the first argument when f takes one.
  template <class F, class... A>
  auto invoker(F&& f, A&&... args) {
    if constexpr (accepts_stop_token<F, A...>) {
      return bind_invoker(std::forward<F>(f), get_stop_token(), std::forward<A>(args)...);
    } else {
      return bind_invoker(std::forward<F>(f), std::forward<A>(args)...);
    }
  }

  template <class F, class... A>
  static task_function bind(F&& f, A&&... args) {
    return task_function(bind_invoker(std::forward<F>(f), std::forward<A>(args)...));
  }

  // A std::packaged_task is one shared_ptr (16 bytes): moved into the task it stays inline, so a
  // future costs only the shared state and result allocations std::future makes itself, with no
  // shared_ptr<packaged_task> and no std::function box around it (BS::thread_pool has both).
  template <class F, class... A>
  std::future<result_t<F, A...>> submit_impl(priority_t priority, F&& f, A&&... args) {
    using R = result_t<F, A...>;
    std::packaged_task<R()> task(invoker(std::forward<F>(f), std::forward<A>(args)...));
    std::future<R> future = task.get_future();
    enqueue(priority, task_function([t = std::move(task)]() mutable { t(); }));
    return future;
  }

  template <class R, class I, class S>
  multi_future<R> submit_bulk_impl(priority_t priority, I first, S last) {
    multi_future<R> futures;
    if constexpr (std::forward_iterator<I>)
      futures.reserve(static_cast<std::size_t>(std::ranges::distance(first, last)));
    for (; first != last; ++first) futures.push_back(submit_impl(priority, std::move(*first)));
    return futures;
  }

  template <class A, class B, class F>
  void loop_impl(priority_t priority, A first, B last, F&& loop, std::size_t blocks) {
    using I = index_t<A, B>;
    blocks_impl(
        priority, first, last,
        [fn = std::decay_t<F>(std::forward<F>(loop))](I b, I e) mutable {
          for (I i = b; i != e; ++i) fn(i);
        },
        blocks);
  }

  template <class A, class B, class F>
  multi_future<void> submit_loop_impl(priority_t priority, A first, B last, F&& loop, std::size_t blocks) {
    using I = index_t<A, B>;
    return submit_blocks_impl(
        priority, first, last,
        [fn = std::decay_t<F>(std::forward<F>(loop))](I b, I e) mutable {
          for (I i = b; i != e; ++i) fn(i);
        },
        blocks);
  }

  template <class A, class B, class F>
  void blocks_impl(priority_t priority, A first, B last, F&& block, std::size_t blocks) {
    using I = index_t<A, B>;
    const index_blocks<I> split(static_cast<I>(first), static_cast<I>(last), block_count(blocks));
    if (split.count() == 0) return;
    const detail::shared_callable<std::decay_t<F>> fn(std::forward<F>(block));
    for (std::size_t k = 0; k < split.count(); ++k) {
      const auto [b, e] = split[k];
      enqueue(priority, task_function([fn, b = b, e = e] { fn.get()(b, e); }));
    }
  }

  template <class A, class B, class F, class I = index_t<A, B>>
  multi_future<std::invoke_result_t<std::decay_t<F>&, I, I>> submit_blocks_impl(priority_t priority, A first,
                                                                                B last, F&& block,
                                                                                std::size_t blocks) {
    using R = std::invoke_result_t<std::decay_t<F>&, I, I>;
    const index_blocks<I> split(static_cast<I>(first), static_cast<I>(last), block_count(blocks));
    multi_future<R> futures;
    if (split.count() == 0) return futures;
    futures.reserve(split.count());
    const detail::shared_callable<std::decay_t<F>> fn(std::forward<F>(block));
    for (std::size_t k = 0; k < split.count(); ++k) {
      const auto [b, e] = split[k];
      std::packaged_task<R()> task([fn, b = b, e = e]() -> R { return fn.get()(b, e); });
      futures.push_back(task.get_future());
      enqueue(priority, task_function([t = std::move(task)]() mutable { t(); }));
    }
    return futures;
  }

  template <class A, class B, class F>
  void sequence_impl(priority_t priority, A first, B last, F&& seq) {
    using I = index_t<A, B>;
    using U = std::make_unsigned_t<I>;
    const index_blocks<I> range(static_cast<I>(first), static_cast<I>(last), 1);
    if (range.size() == 0) return;
    const detail::shared_callable<std::decay_t<F>> fn(std::forward<F>(seq));
    for (U k = 0; k != range.size(); ++k) {
      // Modular arithmetic in the unsigned type: exact for every range of any integer type.
      const I i = static_cast<I>(static_cast<U>(static_cast<U>(static_cast<I>(first)) + k));
      enqueue(priority, task_function([fn, i] { fn.get()(i); }));
    }
  }

  template <class A, class B, class F, class I = index_t<A, B>>
  multi_future<std::invoke_result_t<std::decay_t<F>&, I>> submit_sequence_impl(priority_t priority, A first,
                                                                               B last, F&& seq) {
    using R = std::invoke_result_t<std::decay_t<F>&, I>;
    using U = std::make_unsigned_t<I>;
    const index_blocks<I> range(static_cast<I>(first), static_cast<I>(last), 1);
    multi_future<R> futures;
    if (range.size() == 0) return futures;
    futures.reserve(static_cast<std::size_t>(range.size()));
    const detail::shared_callable<std::decay_t<F>> fn(std::forward<F>(seq));
    for (U k = 0; k != range.size(); ++k) {
      const I i = static_cast<I>(static_cast<U>(static_cast<U>(static_cast<I>(first)) + k));
      std::packaged_task<R()> task([fn, i]() -> R { return fn.get()(i); });
      futures.push_back(task.get_future());
      enqueue(priority, task_function([t = std::move(task)]() mutable { t(); }));
    }
    return futures;
  }

  std::size_t block_count(std::size_t requested) const noexcept {
    return requested != 0 ? requested : get_thread_count();
  }

  // ---- the wake-up protocol --------------------------------------------------------------
  //
  // A worker that found nothing to do sleeps in two steps: it announces itself (sleepers_ + 1),
  // then looks at the queue once more, and only then waits on sleep_cv_. A producer publishes
  // its task, then reads sleepers_; only if it is non-zero does it lock sleep_mutex_ and wake one
  // sleeper. Both sides use seq_cst for "write mine, then read theirs", so at least one of them
  // sees the other: either the producer sees the sleeper (and wakes it) or the worker sees the
  // task (and does not sleep). No task is left in the queue while every worker sleeps, and a
  // producer never makes a system call while all workers are awake.
  //
  // A woken worker is "claimed": the producer moves one unit from sleepers_ to signals_ under
  // sleep_mutex_, so the next producer does not wake a second worker for the same reason. A
  // worker leaving its sleep takes back one unit, from signals_ if any, else from sleepers_:
  // sleepers_ + signals_ always equals the number of workers inside the sleep section.

  void enqueue(priority_t priority, task_function&& task) {
    // A task of this pool never waits for room: if every worker did, no one would make any.
    if (capacity_.load(std::memory_order_relaxed) != 0 && detail::current_worker.pool != this) [[unlikely]] {
      enqueue_bounded(priority, std::move(task));
      return;
    }
    push(priority, std::move(task));
    published();
  }

  // Out of line: an unbounded pool's post (the common case) keeps its short path.
  [[gnu::noinline]] void enqueue_bounded(priority_t priority, task_function&& task) {
    {
      std::unique_lock lock(room_mutex_);
      wait_for_room(lock);
      push(priority, std::move(task));
    }
    published();
  }

  // Bounded mode: queues the task if there is room, else returns false and leaves it untouched.
  bool try_enqueue(priority_t priority, task_function& task) {
    if (capacity_.load(std::memory_order_relaxed) != 0) {
      const std::lock_guard lock(room_mutex_);
      if (!has_room()) return false;
      push(priority, std::move(task));
    } else {
      push(priority, std::move(task));
    }
    published();
    return true;
  }

  void push(priority_t priority, task_function&& task) {
    if constexpr (has_priority) {
      queue_.push(priority, std::move(task));
    } else {
      (void)priority;
      queue_.push(std::move(task));
    }
  }

  void published() {
    // Traced with id 0: a type-erased callable has no identity that survives the queue's moves.
    POOLS_TRACE_POST(this, 0);
    POOLS_TRACE_QUEUE_DEPTH(this, queue_.size());
    if (sleepers_.load(std::memory_order_seq_cst) != 0 && hold_.load(std::memory_order_relaxed) == 0)
      wake_one();
  }

  void wake_one() {
    {
      std::lock_guard lock(sleep_mutex_);
      if (sleepers_.load(std::memory_order_relaxed) == 0) return;  // another producer claimed it
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      ++signals_;
    }
    POOLS_TRACE_WAKE_ANY(this);  // which sleeper the condition variable wakes is its choice
    sleep_cv_.notify_one();
  }

  void wake_all() {
    {
      std::lock_guard lock(sleep_mutex_);
      signals_ += sleepers_.exchange(0, std::memory_order_relaxed);
    }
    sleep_cv_.notify_all();
  }

  // seq_cst loads: the worker's half of the protocol above (hold_ matters for unpause()).
  bool work_visible() const noexcept {
    return hold_.load(std::memory_order_seq_cst) == 0 && queue_.maybe_nonempty();
  }
  // A stopping pool lets its workers go once nothing more may run: the queue is empty (a task
  // still running on another worker that posts more is followed by that worker itself, which
  // looks at the queue after every task), or the pool holds (paused, or replacing workers).
  bool may_exit() const noexcept {
    return stop_.load(std::memory_order_acquire) &&
           (hold_.load(std::memory_order_seq_cst) != 0 || !queue_.maybe_nonempty());
  }

  // Called after a failed pop. Returns false when the worker must exit.
  bool wait_for_work() {
    for (unsigned round = 0; round < spin_pause_rounds + spin_yield_rounds; ++round) {
      if (stop_.load(std::memory_order_relaxed)) return !may_exit();
      if (hold_.load(std::memory_order_relaxed) == 0 && queue_.maybe_nonempty_relaxed()) return true;
      if (round < spin_pause_rounds) {
        pools::cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    std::unique_lock lock(sleep_mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    const auto idle = [this] {
      return !work_visible() && !stop_.load(std::memory_order_relaxed) && signals_ == 0;
    };
    if (idle()) {
      POOLS_TRACE_PARK_BEGIN(this);
      do {  // the checks of a plain while loop, one before each wait: the if made the first
        sleep_cv_.wait(lock);
      } while (idle());
      POOLS_TRACE_PARK_END(this);
    }
    if (signals_ != 0) {
      --signals_;
    } else {
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
    return !may_exit();
  }

  // ---- workers ---------------------------------------------------------------------------

  void worker_main(std::size_t index, std::atomic<std::size_t>& running) {
    detail::current_worker = {index, this};
    POOLS_TRACE_WORKER(this, "futures", static_cast<unsigned>(index));
    run_thread_function(init_, index);
    finish_task(running);  // start_workers() counted the init as a running task
    // admit() runs under the queue's consumer lock: refusing while held makes pause() (which
    // sets the flag under that lock) take effect at once, and counting the task as running in
    // the same critical section that dequeues it keeps queued + running exact for observers.
    const auto admit = [this, &running] {
      if (hold_.load(std::memory_order_relaxed) != 0) return false;
      running.store(1, std::memory_order_relaxed);
      return true;
    };
    task_function task;
    for (;;) {
      if (queue_.try_pop(task, admit)) {
        if (capacity_.load(std::memory_order_relaxed) != 0) [[unlikely]]
          made_room();
        POOLS_TRACE_TASK_BEGIN(0);
        pools::invoke_reporting(task);
        POOLS_TRACE_TASK_END(0);
        task = nullptr;  // the task's captures die before it stops counting as running
        finish_task(running);
        continue;
      }
      if (!wait_for_work()) break;
    }
    run_thread_function(cleanup_, index);
    detail::current_worker = {};
  }

  // seq_cst: pairs with a waiter's "register, then check" in wait() (same protocol as above).
  void finish_task(std::atomic<std::size_t>& running) {
    running.store(0, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) != 0 &&
        (hold_.load(std::memory_order_relaxed) != 0 || !queue_.maybe_nonempty())) {
      notify_waiters();
    }
  }

  static void run_thread_function(const std::function<void(std::size_t)>& f, std::size_t index) noexcept {
    if (!f) return;
    try {
      f(index);
    } catch (...) {
      pools::report_unhandled_exception(std::current_exception());
    }
  }

  // Requires: no workers running. On failure (std::system_error from std::thread), the workers
  // already started are stopped again and the exception propagates.
  void start_workers(std::size_t count) {
    running_set& set = running_set_for(count);
    threads_.reserve(count);
    // Each worker's init counts as a running task from now until it returns (worker_main), so a
    // wait() that starts before a worker has even been scheduled still waits for its init.
    for (std::size_t i = 0; i < count; ++i) set.slots[i].value.store(1, std::memory_order_relaxed);
    try {
      for (std::size_t i = 0; i < count; ++i)
        threads_.emplace_back([this, i, &set] { worker_main(i, set.slots[i].value); });
    } catch (...) {
      // The workers that started clear their own flags; the ones that never will are cleared here.
      for (std::size_t i = threads_.size(); i < count; ++i)
        set.slots[i].value.store(0, std::memory_order_relaxed);
      stop_workers();
      thread_count_.store(0, std::memory_order_relaxed);
      throw;
    }
    thread_count_.store(count, std::memory_order_relaxed);
  }

  void stop_workers() noexcept {
    {
      std::lock_guard lock(sleep_mutex_);
      stop_.store(true, std::memory_order_release);
      signals_ += sleepers_.exchange(0, std::memory_order_relaxed);
    }
    sleep_cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  void reset_impl(std::size_t threads, std::function<void(std::size_t)> init, bool replace_init) {
    if (detail::current_worker.pool == this) {
      throw std::logic_error("pools::futures::thread_pool::reset() called from a task of the same pool");
    }
    const std::size_t count = determine_thread_count(threads);
    std::lock_guard config(config_mutex_);
    set_hold(hold_resetting, true);
    {
      std::unique_lock lock(wait_mutex_);
      const waiter_registration registered(waiters_);
      wait_cv_.wait(lock, [this] { return running_count(std::memory_order_seq_cst) == 0; });
    }
    stop_workers();
    stop_.store(false, std::memory_order_relaxed);
    if (replace_init) init_ = std::move(init);
    // If a thread cannot be started, start_workers() stops the ones it started and rethrows: the
    // pool is then left without workers, and its queued tasks are destroyed with it.
    start_workers(count);
    set_hold(hold_resetting, false);
    wake_all();  // the new workers may have gone to sleep while the hold was still set
  }

  void set_hold(std::uint8_t bit, bool on) {
    queue_.with_consumer_lock([&] {
      if (on) {
        hold_.fetch_or(bit, std::memory_order_seq_cst);
      } else {
        hold_.fetch_and(static_cast<std::uint8_t>(~bit), std::memory_order_seq_cst);
      }
    });
  }

  // ---- room in a bounded queue ------------------------------------------------------------
  //
  // The same "announce, then check" as the sleepers' protocol, with fences because the queue's
  // counters are not seq_cst on the pop side: a producer announces itself in room_waiters_ and
  // then reads the queue's size; a worker pops (the size drops) and then reads room_waiters_.
  // With a seq_cst fence between each side's write and read, at least one sees the other: the
  // producer sees the room, or the worker sees the producer and wakes it. Only bounded pools pay
  // (made_room() is called only when a capacity is set).

  bool has_room() const noexcept {
    const std::size_t capacity = capacity_.load(std::memory_order_relaxed);
    return capacity == 0 || queue_.size() < capacity;
  }

  void wait_for_room(std::unique_lock<std::mutex>& lock) {
    if (has_room()) return;
    room_waiters_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with made_room()'s fence
    room_cv_.wait(lock, [this] { return has_room(); });
    room_waiters_.fetch_sub(1, std::memory_order_relaxed);
  }

  [[gnu::noinline]] void made_room() {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with wait_for_room()'s fence
    if (room_waiters_.load(std::memory_order_relaxed) == 0) return;
    {
      const std::lock_guard lock(room_mutex_);
    }  // a producer between its check and its wait finishes first
    room_cv_.notify_one();
  }

  void notify_room_all() {
    {
      const std::lock_guard lock(room_mutex_);
    }
    room_cv_.notify_all();
  }

  // ---- waiters ---------------------------------------------------------------------------

  struct waiter_registration {
    explicit waiter_registration(std::atomic<std::size_t>& w) : waiters(w) {
      waiters.fetch_add(1, std::memory_order_seq_cst);
    }
    ~waiter_registration() { waiters.fetch_sub(1, std::memory_order_relaxed); }
    waiter_registration(const waiter_registration&) = delete;
    waiter_registration& operator=(const waiter_registration&) = delete;
    std::atomic<std::size_t>& waiters;
  };

  void refuse_if_own_task() const {
    if (detail::current_worker.pool == this) throw wait_deadlock();
  }

  // Under the consumer lock no task changes from queued to running, so "queue empty and nothing
  // running" is read as one state.
  bool idle_for_waiters() {
    return queue_.with_consumer_lock([this] {
      if (running_count(std::memory_order_seq_cst) != 0) return false;
      return is_paused() || queue_.size() == 0;
    });
  }

  void notify_waiters() {
    {
      std::lock_guard lock(wait_mutex_);
    }  // a waiter between its check and its sleep finishes first
    wait_cv_.notify_all();
  }

  // ---- running tasks ---------------------------------------------------------------------
  //
  // Each worker says whether it runs a task in a flag on its own cache line, instead of all
  // workers counting in one shared atomic: a shared counter is a line every worker writes twice
  // per task, once inside the queue's critical section, and on a busy pool that line's trips
  // between cores were most of the cost of taking a task. The flag is set by admit() under the
  // queue's consumer lock (so queued + running stays exact) and cleared after the task.
  // Readers (monitoring, wait(), reset()) add the flags up: O(threads), off the hot path.
  // reset() to more threads than the set has room for gives the new workers a bigger set (at
  // least twice the old size); the old one (all zero by then) stays allocated until the pool
  // dies, because a monitor may still be adding it up. The capacities double, so all the sets
  // ever allocated hold at most four times as many flags as the largest thread count used.
  struct alignas(pools::cache_line) running_flag {
    std::atomic<std::size_t> value{0};
  };
  struct running_set {
    explicit running_set(std::size_t capacity)
        : capacity(capacity), slots(std::make_unique<running_flag[]>(capacity)) {}
    const std::size_t capacity;
    std::atomic<std::size_t> count{0};  // flags in use; the rest stay 0
    std::unique_ptr<running_flag[]> slots;
  };

  // Requires: no worker running (construction, or reset() between its stop and start).
  running_set& running_set_for(std::size_t count) {
    running_set* set = running_.load(std::memory_order_relaxed);
    if (set == nullptr || set->capacity < count) {
      const std::size_t capacity = std::max(count, set == nullptr ? 0 : 2 * set->capacity);
      running_sets_.push_back(std::make_unique<running_set>(capacity));
      set = running_sets_.back().get();
    }
    set->count.store(count, std::memory_order_relaxed);
    running_.store(set, std::memory_order_release);
    return *set;
  }

  std::size_t running_count(std::memory_order order) const noexcept {
    const running_set* set = running_.load(std::memory_order_acquire);
    std::size_t n = 0;
    if (set != nullptr) {
      const std::size_t count = set->count.load(std::memory_order_relaxed);
      for (std::size_t i = 0; i < count; ++i) n += set->slots[i].value.load(order);
    }
    return n;
  }

  // ---- state -----------------------------------------------------------------------------

  mutable queue_type queue_;

  std::vector<std::unique_ptr<running_set>> running_sets_;  // the current one last; see above
  std::atomic<running_set*> running_{nullptr};

  // Read by every producer and worker, written rarely: kept off the busy lines above.
  alignas(pools::cache_line) std::atomic<std::size_t> sleepers_{0};  // see the protocol above
  std::atomic<std::uint8_t> hold_{0};                                // hold_paused | hold_resetting
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> waiters_{0};  // threads in wait(), wait_for(), wait_until() or reset()
  std::atomic<std::size_t> thread_count_{0};
  std::atomic<std::size_t> capacity_{0};      // set_capacity(); 0: unbounded
  std::atomic<std::size_t> room_waiters_{0};  // producers inside wait_for_room()

  alignas(pools::cache_line) std::mutex sleep_mutex_;
  std::condition_variable sleep_cv_;
  std::size_t signals_ = 0;  // guarded by sleep_mutex_

  std::mutex wait_mutex_;
  std::condition_variable wait_cv_;

  // Bounded producers check for room and push under this mutex, so that together they never
  // queue more than the capacity; unbounded pools never touch it.
  std::mutex room_mutex_;
  std::condition_variable room_cv_;

  mutable std::mutex stop_mutex_;  // guards stop_source_ (the object; its state is thread-safe)
  std::stop_source stop_source_;
  std::atomic<std::size_t> tasks_stopped_{0};

  mutable std::mutex config_mutex_;  // reset(), set_cleanup_func(), get_thread_ids()
  std::vector<std::thread> threads_;
  std::function<void(std::size_t)> init_;
  std::function<void(std::size_t)> cleanup_;
};

/// The default pool: FIFO, no priorities (nothing of them is compiled in).
using thread_pool = basic_thread_pool<tp::none>;
/// Tasks take an optional leading priority_t; higher priorities run first.
using priority_thread_pool = basic_thread_pool<tp::priority>;

static_assert(pools::Executor<thread_pool>);
static_assert(pools::Executor<priority_thread_pool>);

}  // namespace pools::futures
