// SPDX-License-Identifier: MIT
// src/scheduler.hpp — workers, queues, parking and shutdown of one thread_pool (private header).
//
// Vocabulary (README has the state diagram):
//  * task    — a spawned/posted callable (detail/task.hpp). Has no stack of its own.
//  * fiber   — a stack plus saved registers (detail/context.hpp). Runs tasks in a loop: it takes
//              one, runs it to the end on its own stack, takes the next. Only when a task has to
//              wait does its fiber stop, and the worker continues the loop on another fiber.
//  * home    — the worker thread's original stack. It looks for work, hands it to a fiber, and
//              parks the thread when there is none.
//  * item    — what the queues hold: a task pointer, or a fiber pointer with the low bit set
//              (a fiber that was woken and waits to continue).
#pragma once

#include <pools/chase_lev_deque.hpp>
#include <pools/fibers/detail/context.hpp>
#include <pools/fibers/detail/task.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/ready_fifo.hpp>
#include <pools/trace.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "timer_queue.hpp"

namespace pools::fibers::detail {

/// Work a context does right after a switch, on the context switched *to*, on behalf of the one
/// that left (`from`). This is how a fiber publishes itself to a waker only once its registers
/// are saved: until then, nobody can resume it.
struct post_switch_action {
  void (*fn)(context* from, void* arg) noexcept = nullptr;
  void* arg = nullptr;
};

class scheduler;

class simulation;  // (below)

/// Each worker's Chase–Lev deque of items (pools/chase_lev_deque.hpp, shared with the coroutines
/// variant). Its push() only releases: the wake-up handshake adds its own seq_cst fence
/// (scheduler::notify_one_if_sleeping, scheduler::park).
using work_stealing_deque = pools::chase_lev_deque<std::uintptr_t>;

struct alignas(64) worker {
  worker(scheduler& s, std::size_t i) noexcept
      : sched(&s), index(i), rng(static_cast<std::uint32_t>(i) * 2654435761u + 1u) {}

  scheduler* sched;  // nullptr: a simulated worker, fed by the simulator (`simulation`, below)
  std::size_t index;
  work_stealing_deque deque;
  context home{false};
  context* current = &home;  // what this worker runs now
  context* pending_from = nullptr;
  post_switch_action pending_action;
  fiber_record* idle = nullptr;  // finished fibers kept for reuse, only this worker touches them
  std::size_t idle_count = 0;
  std::uint32_t rng;
  std::uint32_t tick = 0;
  // With a park hook, wakes go to one worker by index: these say whom. Guarded by park_mutex_.
  bool sleeping = false;  // in (or about to enter) the hook's park()
  bool poll_due = false;  // the park hook's between-task poll is due (owner only, no lock)
  // Fibers woken by the park hook's completions (pools/ready_fifo.hpp says why not the deque).
  // find_work alternates between this queue and the deque.
  bool in_hook = false;
  pools::ready_fifo<std::uintptr_t> io_ready;
  bool woken = false;  // a wake is on its way to it
  // A task taken from a queue for which no fiber could be made (no stack: scheduler::context_for),
  // and the exception that says why. The home context ends it with that error (fail_stackless)
  // as the first thing it does: a fiber that finds itself in this case switches home at once.
  // Owner only.
  task_base* stackless = nullptr;
  std::exception_ptr stackless_error;
#if POOLS_TRACE
  // The trace's "task" slices open on this worker's thread, and how often it switched away from
  // a context (see trace_begin below). Owner only.
  unsigned trace_open = 0;
  std::uint64_t trace_switches = 0;
#endif
  // Counters for quiescence detection (scheduler::quiescent). Written only by this worker's
  // thread, so a load and a store suffice; release pairs with the destructor's acquire loads.
  alignas(64) std::atomic<std::uint64_t> created{0};
  std::atomic<std::uint64_t> completed{0};
  std::thread thread;
};

inline void bump(std::atomic<std::uint64_t>& counter) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

constexpr std::uintptr_t fiber_tag = 1;
inline std::uintptr_t item_of(task_base* t) noexcept {
  return reinterpret_cast<std::uintptr_t>(t);
}
inline std::uintptr_t item_of(fiber_record* f) noexcept {
  return reinterpret_cast<std::uintptr_t>(f) | fiber_tag;
}
inline bool is_fiber_item(std::uintptr_t i) noexcept {
  return (i & fiber_tag) != 0;
}
inline task_base* task_of(std::uintptr_t i) noexcept {
  return reinterpret_cast<task_base*>(i);
}
inline fiber_record* fiber_of(std::uintptr_t i) noexcept {
  return reinterpret_cast<fiber_record*>(i & ~fiber_tag);
}

// The deque in the item vocabulary, where 0 means "nothing" (items are never 0). Owner only.
inline std::uintptr_t pop_item(work_stealing_deque& d) noexcept {
  std::uintptr_t item = 0;
  return d.pop(item) ? item : 0;
}
inline std::uintptr_t peek_item(const work_stealing_deque& d) noexcept {
  std::uintptr_t item = 0;
  return d.peek_bottom(item) ? item : 0;
}

/// The id an item is traced under (pools/trace.hpp): its task's or fiber's address, the same in
/// its post, its steal and the task slice that runs it.
inline std::uint64_t trace_id(std::uintptr_t item) noexcept {
  return item & ~fiber_tag;
}

class scheduler {
 public:
  explicit scheduler(const pool_options& options);
  /// A simulated scheduler: no threads, one worker that runs on the caller (see `simulation`).
  scheduler(const pool_options& options, simulation& sim);
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// Drains (every task runs, including ones spawned meanwhile), then stops the workers.
  void shutdown();

  void submit(task_base* t);
  /// Makes a woken fiber runnable: on the waker's deque if the waker is one of our workers
  /// (it will likely run next there, data still in cache), else on the injection queue.
  void schedule(fiber_record* f) noexcept;
  /// A yielding fiber: to the back of the injection queue, behind everything already waiting.
  void requeue(fiber_record* f) noexcept;

  std::size_t concurrency() const noexcept { return workers_.size(); }
  /// The simulation this scheduler runs under, or nullptr for a real pool.
  simulation* simulated() const noexcept { return sim_; }

  // ---- a simulated scheduler only (src/simulated.cpp) ----
  /// The fiber that runs `item` on the simulated worker: the suspended fiber itself, or for a task
  /// an idle or new fiber, which takes the task.
  fiber_record& simulated_fiber(std::uintptr_t item);
  /// Switches to `f` on the simulated worker, on the calling thread, until f waits, yields or
  /// runs out of work: one step of the simulation.
  void run_simulated(fiber_record& f);
  /// After a run: ends the simulated worker's idle fibers.
  void end_simulated() noexcept;
  timer_queue& timers() noexcept { return timers_; }
  stack_pool& stacks() noexcept { return stacks_; }
  pool_statistics stats() const;

  // ---- used by the worker loop, fibers and parking (scheduler.cpp, parking.cpp) ----
  /// `poll_io`: may run the park hook's completions now and then. Not from a fiber that is
  /// suspending (suspend_current): a completion that wakes that very fiber would wait for it to
  /// finish suspending, on the thread that is supposed to finish it.
  std::uintptr_t find_work(worker& w, bool poll_io = true);
  /// Runs the park hook's ready completions on worker `w` (owner only).
  void poll_hook(worker& w);
  static std::uintptr_t take_io_ready(worker& w) noexcept;
  /// A context to run an item on: the woken fiber itself, or a fiber (idle or new) for a task.
  /// nullptr when a task needs a new fiber and none can be made (its stack cannot be mapped):
  /// the task is then left in w.stackless, and the caller must switch to (or be) w.home.
  context* context_for(worker& w, std::uintptr_t item) noexcept;
  /// On the home context: ends w.stackless's task, unrun, with its error (join() rethrows it, a
  /// posted task's is reported), like any task that threw. On home, not on the fiber that found
  /// it: ending a task runs user code (the callable's destructor, the unhandled-exception handler)
  /// and wakes a joiner, which belongs between tasks, not inside another fiber's suspension.
  void fail_stackless(worker& w) noexcept;
  void run_task(task_base* t) noexcept;
  /// After a task ran (or failed to start): publishes its end to a joiner or reports its error.
  void finish_task(task_base* t) noexcept;
  void timer_armed_earliest() noexcept { notify_one_if_sleeping(); }
  std::size_t idle_fiber_limit() const noexcept { return idle_limit_; }
  void fiber_ended() noexcept { fibers_alive_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  void worker_main(worker& w);
  std::uintptr_t pop_injected(worker& w);
  std::uintptr_t steal(worker& w);
  void inject(std::uintptr_t item, bool new_task);
  void notify_one_if_sleeping() noexcept;
  bool park(worker& w);  // false once shut down
  bool work_visible() const noexcept;
  bool quiescent() const noexcept;
  fiber_record* new_fiber();

  simulation* const sim_ = nullptr;
  pools::park_hook* const hook_;  // nullptr: workers sleep on park_cv_
  stack_pool stacks_;
  timer_queue timers_;
  std::size_t idle_limit_;
  std::vector<std::unique_ptr<worker>> workers_;

  std::mutex inject_mutex_;
  std::deque<std::uintptr_t> injected_;  // guarded by inject_mutex_
  // Woken fibers that no queue had room for (out of memory), oldest first: linked through
  // fiber_record::next_overflow, so queueing one never allocates. Guarded by inject_mutex_, and
  // counted in injected_size_ with injected_, so that workers see them as injected work.
  fiber_record* overflow_head_ = nullptr;
  fiber_record* overflow_tail_ = nullptr;
  std::size_t overflow_size_ = 0;
  std::atomic<std::size_t> injected_size_{0};
  std::atomic<std::uint64_t> external_created_{0};

  std::mutex park_mutex_;
  std::condition_variable park_cv_;
  std::condition_variable quiesce_cv_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
  bool shut_down_ = false;  // guarded by park_mutex_
  bool joined_ = false;

  std::atomic<std::size_t> fibers_created_{0};
  std::atomic<std::size_t> fibers_alive_{0};
};

// ---- the switching layer (context_switch.cpp) --------------------------------------------
/// Saves the running context `from` and resumes `to`. The caller has set the worker's
/// pending_from / pending_action / current. Returns when something switches back to `from`,
/// possibly on another thread, after running that switch's pending action.
void switch_context(context& from, context& to) noexcept;
/// A new fiber on a pooled stack, ready to be switched to. Throws if no stack can be mapped.
fiber_record* create_fiber(scheduler& s);
/// Records the worker thread's own stack as a context (for TSan).
void prepare_home(context& home) noexcept;
/// Frees a suspended fiber's stack without resuming it: nothing on it is destroyed. Only for a
/// simulated scheduler's fibers left waiting when its run stopped (scheduler::end_simulated).
void discard_fiber(fiber_record* f) noexcept;

// ---- scheduler.cpp ---------------------------------------------------------------------
worker* current_worker() noexcept;
/// Sets the calling thread's worker; returns the previous one (a simulated step, run_simulated).
worker* exchange_current_worker(worker* w) noexcept;
/// A fiber's life: run tasks until told to end; returns the context to end into.
context* fiber_main(fiber_record& self) noexcept;
/// Stops the calling fiber: picks the next context, switches, and has `action` run there.
/// Returns when the fiber is resumed.
void suspend_current(post_switch_action action) noexcept;
/// As suspend_current, but to a context the caller already chose.
void suspend_to(context& next, post_switch_action action) noexcept;

[[noreturn]] void fatal(const char* what) noexcept;

#if POOLS_TRACE
// ---- tracing (pools/trace.hpp; compiled only with -DPOOLS_TRACE=ON) -----------------------------
// A "task" slice of the trace is one run of one queued item on one worker: a task from the
// moment run_task (or a joiner running it inline) starts it, or a woken fiber from the moment it
// is switched into. Every item that enters a queue is posted once (submit, schedule, requeue)
// and starts exactly one slice when taken; a stale queue entry (a task its joiner already ran
// inline) is dropped without one, its run having been counted where the joiner ran it.
// A task may suspend halfway: its fiber leaves the thread with slices open, and may finish it
// on another thread. So every switch away from a context closes all the slices open on the
// thread (trace_leave), and a task's end closes its slice only if no switch happened since its
// begin (same worker, same switch count); once resumed, the rest of its run belongs to the slice
// of the woken fiber.
struct trace_slice {
  worker* w;
  std::uint64_t switches;
};
inline trace_slice trace_begin(worker& w, std::uint64_t id) noexcept {
  POOLS_TRACE_TASK_BEGIN(id);
  ++w.trace_open;
  return {&w, w.trace_switches};
}
inline void trace_end(const trace_slice& s, std::uint64_t id) noexcept {
  if (current_worker() != s.w || s.w->trace_switches != s.switches) return;  // closed at a switch
  POOLS_TRACE_TASK_END(id);
  --s.w->trace_open;
}
/// Before every switch away from a context on `w`'s thread: closes that context's slices.
inline void trace_leave(worker& w, std::uint64_t id) noexcept {
  for (; w.trace_open > 0; --w.trace_open) POOLS_TRACE_TASK_END(id);
  ++w.trace_switches;
}
#endif

// ---- simulation -----------------------------------------------------------------------------
/// The seam between this scheduler and pools::sim (src/simulated.cpp implements it; the guide is
/// docs/testing-schedules.md). A scheduler made with a simulation has no worker threads: its one
/// worker runs on the simulator's thread, one item per simulator step (run_simulated), and takes
/// nothing from any queue itself — its `sched` is nullptr, so every place where a fiber would
/// queue work (a spawn, a wake, a yield) falls through to inject(), which hands the item to the
/// simulation instead of the injection queue, and the seed decides when it runs. Timed waits
/// become timers of the virtual clock. A real pool never calls it: its hot paths (a spawn or a
/// wake on a worker's own deque, a join run inline) do not reach the branches that test for it.
///
/// Its calls do not throw: they come from noexcept paths (a wake) and from between a primitive's
/// lock and its release. A simulation that fails in one (out of memory) stops the run at the end
/// of the step instead.
class simulation {
 public:
  /// A new task or a fiber made ready (woken, yielding, its join's task finished).
  virtual void queued(std::uintptr_t item) noexcept = 0;
  /// The running fiber is about to wait on `what` (a primitive's name) at `object`.
  virtual void waits_on(const char* what, const void* object) noexcept = 0;
  /// The running fiber `f` is at a scheduling point before `operation` ("mutex lock",
  /// detail::sync_point): queues its next step, which performs the operation, and names the
  /// point. False when it could not (out of memory: the run stops at the end of the step).
  virtual bool point_before(const char* operation, fiber_record* f) noexcept = 0;
  /// Arms a timer for the running fiber's waiter `w`: at `deadline` on the steady_clock as this
  /// simulation maps it (now()), the timer claims w and resumes its fiber, with w.timed_out set.
  virtual void arm_timer(waiter& w, std::chrono::steady_clock::time_point deadline) noexcept = 0;
  /// Disarms w's timer if it has not fired.
  virtual void cancel_timer(waiter& w) noexcept = 0;
  /// The virtual clock, mapped onto std::chrono::steady_clock (an epoch plus the virtual time).
  virtual std::chrono::steady_clock::time_point now() const noexcept = 0;

 protected:
  ~simulation() = default;
};

}  // namespace pools::fibers::detail
