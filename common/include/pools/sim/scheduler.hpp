// SPDX-License-Identifier: MIT
// pools/sim/scheduler.hpp — one seeded, single-threaded, replayable scheduler.
//
//   pools::sim::scheduler s(pools::sim::make_strategy("pct:2"), /*seed=*/17);
//   auto a = s.new_task("producer");
//   s.ready(a, [] { ... });                // a step of task a: runs once, on this thread
//   s.run();                               // every step, in the order the seed picks
//
// WHAT RUNS. A *task* is a name and a number. A *step* is a callable that belongs to a task:
// the next stretch of that task's code, up to where it waits again (a coroutine resumed to its
// next co_await, a fiber switched to until it yields, one callback). ready(t, f) queues a step;
// run() runs them all on the calling thread, one at a time. A task's steps run in the order they
// were queued; *which task* goes next is the one decision the strategy makes, from the seed
// (pools/sim/strategy.hpp). Nothing else is left to chance — no other thread, no wall clock — so
// one seed is one schedule, and running the same seed again replays it exactly.
//
// TIME. Virtual (pools/sim/virtual_clock.hpp): each step costs options::step_cost; at(deadline,
// t, f) queues a step for when the virtual clock reaches `deadline`; timers that are due join the
// ready tasks before each pick; when nothing is ready the clock jumps to the earliest timer.
//
// SCHEDULING POINTS. The strategy chooses only between steps, so where a step may end decides
// which interleavings a run can show. A step ends — a *scheduling point* — where its task waits,
// yields or sleeps, and *before every synchronisation operation*: a lock, try_lock and unlock, a
// channel send, receive and close, an event's set and wait, a condition variable's notify and
// wait, a latch or wait group, a join — whether the operation would have to wait or not. The
// adapter queues the task's next step, which performs the operation, and says so with
// point_before("async_mutex lock"): the printed schedule reads "yields before async_mutex lock".
// Why every operation (as loom, shuttle and Coyote do): when tasks share data only under those
// primitives (no data race), two schedules can only end differently if they order two of the
// primitives' operations differently, so a switch allowed before each one can reach every outcome
// such a program has. A switch only where a task must wait cannot: an uncontended lock waits for
// nobody, so a check made under one lock and acted on under the next ("a split critical
// section", which passes almost every real run) would run as one step and never be seen stale.
// What the points do not reach: a data race (memory touched by two tasks with no primitive
// between: ThreadSanitizer's to find), the orders of std::atomic operations in user code (the
// simulator has no atomics of its own; the Relacy models in common/model/ check those), and in
// coroutines the calls that do not co_await (unlock(), set(), count_down(), close(), try_lock()):
// a coroutine can only be suspended at a co_await, so such a call takes effect in the step that
// makes it, and the next switch comes before its next co_await on a primitive
// (pools/coroutines/simulated.hpp). Where the points fall is fixed by the code, so a seed is
// still one schedule. A point costs one step: count them in pct:D:N's N.
//
// WAITS. A task that waits on something (a mutex, an event, a channel) says so with
// waiting(t, what); its next ready() ends the wait. When nothing is ready, no timer is pending
// and tasks still wait, nothing can ever wake them: run() throws deadlock_error naming each one.
//
// FAILURES. An exception escaping a step stops the run: run() rethrows it. The steps run so far
// stay in schedule() (the printed schedule) and trace_tracks() (a Perfetto trace in virtual time,
// write_trace()), so a failing seed can be read step by step.
//
// The adapters that run each variant's user code on it: pools/coroutines/simulated.hpp,
// pools/fibers/simulated.hpp, pools/reactor/simulated.hpp; the explorer over many seeds:
// pools/sim/explore.hpp. docs/testing-schedules.md is the guide.
#pragma once

#include <pools/sim/deadlock.hpp>
#include <pools/sim/strategy.hpp>
#include <pools/sim/virtual_clock.hpp>
#include <pools/trace_export.hpp>
#include <pools/unique_function.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pools::sim {

/// One step as it ran: the printed schedule.
struct step_record {
  std::uint64_t step;
  virtual_clock::time_point at;
  task_id task;
  std::string note;  // how the step ended, if its adapter said (annotate()): "waits on async_mutex"
};

class scheduler {
 public:
  struct options {
    std::chrono::nanoseconds step_cost{1000};  // virtual time one step takes
    std::uint64_t max_steps = 1'000'000;       // more: step_limit_error (a livelock?)
  };

  /// A scheduler whose choices come from `how`, started with `seed`.
  scheduler(std::unique_ptr<strategy> how, std::uint64_t seed);
  scheduler(std::unique_ptr<strategy> how, std::uint64_t seed, options opts);
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;
  ~scheduler();

  /// A new task named `name` (the deadlock report and the trace use the name).
  task_id new_task(std::string name);
  const std::string& name_of(task_id t) const { return tasks_.at(t).name; }
  std::size_t task_count() const noexcept { return tasks_.size(); }
  /// The task whose step is running on this thread now; throws std::logic_error between steps.
  task_id current_task() const;
  /// True while a step runs.
  bool in_step() const noexcept { return running_ != no_task; }

  /// Queues `step` as task t's next step (it runs after t's earlier ready steps). Ends t's wait.
  void ready(task_id t, unique_function<void()> step);

  /// A timer's number, for cancel().
  using timer_id = std::uint64_t;
  /// Queues `step` as a step of task t once the virtual clock reaches `deadline`. Throws
  /// std::out_of_range if there is no task t.
  timer_id at(virtual_clock::time_point deadline, task_id t, unique_function<void()> step);
  /// Removes a pending timer; false when it already fired or was cancelled.
  bool cancel(timer_id id);

  /// Says how the running step ends ("yields", "waits on async_mutex"), for the printed
  /// schedule; a later call in the same step adds to it. Ignored between steps (and when out of
  /// memory: a note is no reason to stop a run).
  void annotate(const std::string& note) noexcept;

  /// The running step ends at a scheduling point before `operation` ("async_mutex lock", see
  /// SCHEDULING POINTS): notes "yields before <operation>" in the schedule and counts it. The
  /// adapter has queued the task's next step, the one that performs the operation.
  void point_before(std::string_view operation) noexcept;
  /// The scheduling points before operations so far (point_before() calls in steps).
  std::uint64_t points() const noexcept { return points_; }

  /// Task t now waits on `what` (for the deadlock report and the trace) until its next ready().
  void waiting(task_id t, std::string what);

  /// The virtual time.
  virtual_clock::time_point now() const noexcept { return now_; }
  /// The step about to run (or running): the number of steps run so far.
  std::uint64_t steps() const noexcept { return schedule_.size(); }
  std::uint64_t seed() const noexcept { return seed_; }
  const strategy& strategy_used() const noexcept { return *strategy_; }

  /// Runs every step until nothing is ready and no timer is pending. Throws deadlock_error when
  /// tasks still wait then, step_limit_error after options::max_steps steps, and rethrows an
  /// exception escaping a step (the run stops there). Not reentrant.
  void run();

  /// The steps run so far, in order.
  const std::vector<step_record>& schedule() const noexcept { return schedule_; }
  /// The schedule as text, one step a line ("step 12  at 0.000012 s  task 3 consumer: yields"); with
  /// `last` > 0 only the last `last` steps.
  std::string schedule_text(std::size_t last = 0) const;
  /// The run as trace tracks, one per task, in virtual time: a "task" slice per step, a "park"
  /// slice per wait, a "post" instant where a step made another task ready.
  std::vector<trace::recorded_track> trace_tracks() const;
  /// Writes trace_tracks() as a Perfetto / chrome://tracing file (pools/trace_export.hpp).
  trace::summary write_trace(const std::string& path) const;

  /// The scheduler running a step on this thread, or nullptr.
  static scheduler* current() noexcept;

 private:
  static constexpr task_id no_task = ~task_id{0};

  struct item {
    task_id task;
    unique_function<void()> step;
  };
  struct task_state {
    std::string name;
    std::string waits_on;  // empty: not waiting
    std::vector<trace::record> trace;
  };

  void record(task_id t, trace::event what, std::uint64_t id, std::uint32_t arg = 0);
  void move_due_timers();
  [[noreturn]] void throw_deadlock() const;
  std::uint64_t now_ns() const noexcept;

  std::unique_ptr<strategy> strategy_;
  std::uint64_t seed_;
  options opts_;
  std::vector<task_state> tasks_;
  std::vector<item> ready_;                                                // in arrival order
  std::map<std::pair<virtual_clock::time_point, timer_id>, item> timers_;  // by deadline, then age
  std::map<timer_id, virtual_clock::time_point> timer_deadlines_;
  timer_id next_timer_ = 0;
  virtual_clock::time_point now_{};
  task_id running_ = no_task;
  std::vector<step_record> schedule_;
  std::uint64_t points_ = 0;
  bool in_run_ = false;
};

}  // namespace pools::sim
