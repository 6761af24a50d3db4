// SPDX-License-Identifier: MIT
// The simulator's scheduler (pools/sim/scheduler.hpp): a loop that asks its strategy who goes next.
#include <pools/sim/blocking_wait.hpp>
#include <pools/sim/scheduler.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace pools::sim {

namespace {
// The scheduler whose step runs on this thread: virtual_clock::now() and the variants' adapters
// find it here. Only run() sets it, and restores the previous value on its way out.
constinit thread_local scheduler* tl_current = nullptr;
}  // namespace

virtual_clock::time_point virtual_clock::now() {
  const scheduler* s = scheduler::current();
  if (s == nullptr) throw std::logic_error("pools::sim::virtual_clock::now() called outside a simulated run");
  return s->now();
}

scheduler* scheduler::current() noexcept {
  return tl_current;
}

void throw_blocking_wait(const std::string& call) {
  const scheduler* s = scheduler::current();
  const std::string who = s != nullptr && s->in_step()
                              ? fmt::format("task {} \"{}\" (step {})", s->current_task(),
                                            s->name_of(s->current_task()), s->steps() - 1)
                              : std::string("a simulated task");
  throw blocking_wait_error(
      fmt::format("pools::sim: {} called {} on a result that is not ready. A blocking wait cannot be "
                  "simulated: the run has "
                  "one thread, and the task that would produce the result can only run on it after this step "
                  "returns, so the "
                  "wait would never end (on a pool of N threads, the same wait deadlocks once N tasks wait "
                  "at once). Wait "
                  "without blocking: co_await (coroutines), a fiber's join or get (fibers), a continuation "
                  "(reactor); or get() "
                  "the result outside the simulated tasks, after the run",
                  who, call));
}

scheduler::scheduler(std::unique_ptr<strategy> how, std::uint64_t seed)
    : scheduler(std::move(how), seed, options{}) {}

scheduler::scheduler(std::unique_ptr<strategy> how, std::uint64_t seed, options opts)
    : strategy_(std::move(how)), seed_(seed), opts_(opts) {
  if (!strategy_) throw std::invalid_argument("pools::sim::scheduler: no strategy");
  strategy_->begin(seed);
}

scheduler::~scheduler() = default;

task_id scheduler::new_task(std::string name) {
  const auto t = static_cast<task_id>(tasks_.size());
  tasks_.push_back({std::move(name), {}, {}});
  strategy_->task_created(t);
  return t;
}

task_id scheduler::current_task() const {
  if (running_ == no_task) throw std::logic_error("pools::sim::scheduler::current_task() outside a step");
  return running_;
}

std::uint64_t scheduler::now_ns() const noexcept {
  return static_cast<std::uint64_t>(now_.time_since_epoch().count());
}

void scheduler::record(task_id t, trace::event what, std::uint64_t id, std::uint32_t arg) {
  tasks_.at(t).trace.push_back(trace::record{now_ns(), id, 0, arg, 0, what, false});
}

void scheduler::ready(task_id t, unique_function<void()> step) {
  task_state& ts = tasks_.at(t);
  if (!ts.waits_on.empty()) {
    ts.waits_on.clear();
    record(t, trace::event::park_end, 0);
  }
  // The arrow of the trace: who made t ready (a post instant on the poster's track).
  if (running_ != no_task && running_ != t) record(running_, trace::event::post, t);
  ready_.push_back({t, std::move(step)});
}

scheduler::timer_id scheduler::at(virtual_clock::time_point deadline, task_id t,
                                  unique_function<void()> step) {
  // A bad task id fails here, where the caller can see it, not when the timer fires.
  if (t >= tasks_.size())
    throw std::out_of_range(
        fmt::format("pools::sim::scheduler::at(): no task {} ({} tasks)", t, tasks_.size()));
  const timer_id id = next_timer_++;
  timers_.emplace(std::pair{deadline, id}, item{t, std::move(step)});
  timer_deadlines_.emplace(id, deadline);
  return id;
}

bool scheduler::cancel(timer_id id) {
  const auto it = timer_deadlines_.find(id);
  if (it == timer_deadlines_.end()) return false;
  timers_.erase(std::pair{it->second, id});
  timer_deadlines_.erase(it);
  return true;
}

void scheduler::annotate(const std::string& note) noexcept {
  if (running_ == no_task || schedule_.empty()) return;
  try {
    std::string& n = schedule_.back().note;
    n += n.empty() ? note : "; " + note;
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory, the note is dropped (see the header)
  }
}

void scheduler::point_before(std::string_view operation) noexcept {
  if (running_ == no_task) return;
  ++points_;
  try {
    annotate(fmt::format("yields before {}", operation));
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory, the note is dropped (as annotate())
  }
}

void scheduler::waiting(task_id t, std::string what) {
  task_state& ts = tasks_.at(t);
  if (what.empty()) what = "(something unnamed)";
  if (ts.waits_on.empty()) record(t, trace::event::park_begin, 0);
  ts.waits_on = std::move(what);
}

void scheduler::move_due_timers() {
  // In deadline order, and among equal deadlines in the order they were set: deterministic.
  while (!timers_.empty() && timers_.begin()->first.first <= now_) {
    auto node = timers_.extract(timers_.begin());
    timer_deadlines_.erase(node.key().second);
    ready(node.mapped().task, std::move(node.mapped().step));
  }
}

void scheduler::throw_deadlock() const {
  std::vector<deadlock_error::waiter> waiters;
  for (task_id t = 0; t < tasks_.size(); ++t)
    if (!tasks_[t].waits_on.empty()) waiters.push_back({t, tasks_[t].name, tasks_[t].waits_on});
  std::string message = fmt::format("deadlock at {:.6f} s (step {}): nothing can run and {} task{} wait{}",
                                    static_cast<double>(now_ns()) / 1e9, schedule_.size(), waiters.size(),
                                    waiters.size() == 1 ? "" : "s", waiters.size() == 1 ? "s" : "");
  for (const auto& w : waiters)
    message += fmt::format("\n  task {} \"{}\" waits on {}", w.task, w.name, w.what);
  throw deadlock_error(message, std::move(waiters));
}

void scheduler::run() {
  if (in_run_) throw std::logic_error("pools::sim::scheduler::run() is not reentrant");
  in_run_ = true;
  scheduler* const previous = tl_current;
  tl_current = this;
  // Restores the thread's state however run() ends (a step's exception, a deadlock).
  struct restore {
    scheduler* self;
    scheduler* previous;
    ~restore() {
      tl_current = previous;
      self->in_run_ = false;
      self->running_ = no_task;
    }
  } guard{this, previous};

  std::vector<task_id> candidates;
  for (;;) {
    move_due_timers();
    if (ready_.empty()) {
      if (timers_.empty()) break;
      now_ = std::max(now_, timers_.begin()->first.first);  // nothing to do until then: jump
      continue;
    }
    if (schedule_.size() >= opts_.max_steps)
      throw step_limit_error(
          fmt::format("pools::sim: the run took more than {} steps (a livelock?)", opts_.max_steps));
    // Each ready task once, in the order of its oldest ready step.
    candidates.clear();
    for (const item& i : ready_)
      if (std::find(candidates.begin(), candidates.end(), i.task) == candidates.end())
        candidates.push_back(i.task);
    const std::size_t chosen = strategy_->pick(candidates, schedule_.size());
    if (chosen >= candidates.size()) throw std::logic_error("pools::sim: the strategy picked no ready task");
    const task_id t = candidates[chosen];
    // That task's oldest step: a task's steps keep their order.
    const auto it = std::find_if(ready_.begin(), ready_.end(), [t](const item& i) { return i.task == t; });
    unique_function<void()> step = std::move(it->step);
    ready_.erase(it);

    schedule_.push_back({schedule_.size(), now_, t, {}});
    record(t, trace::event::task_begin, schedule_.size() - 1);
    running_ = t;
    step();  // an exception leaves through here: the run stops, the schedule so far stays
    running_ = no_task;
    now_ += opts_.step_cost;
    // The slice ends a nanosecond early so that a park beginning as the step ends nests after it.
    tasks_[t].trace.push_back(
        trace::record{now_ns() - 1, schedule_.size() - 1, 0, 0, 0, trace::event::task_end, false});
  }
  bool anyone_waits = false;
  for (const auto& ts : tasks_) anyone_waits = anyone_waits || !ts.waits_on.empty();
  if (anyone_waits) throw_deadlock();
}

std::string scheduler::schedule_text(std::size_t last) const {
  std::string out;
  const std::size_t from = last != 0 && last < schedule_.size() ? schedule_.size() - last : 0;
  for (std::size_t i = from; i < schedule_.size(); ++i) {
    const step_record& r = schedule_[i];
    out += fmt::format("step {:>5}  at {:.6f} s  task {} {}{}{}\n", r.step,
                       static_cast<double>(r.at.time_since_epoch().count()) / 1e9, r.task,
                       tasks_[r.task].name, r.note.empty() ? "" : ": ", r.note);
  }
  return out;
}

std::vector<trace::recorded_track> scheduler::trace_tracks() const {
  std::vector<trace::recorded_track> tracks;
  tracks.reserve(tasks_.size());
  for (task_id t = 0; t < tasks_.size(); ++t) {
    trace::recorded_track track{fmt::format("task {} {}", t, tasks_[t].name), tasks_[t].trace};
    // A step cut short by an exception, a wait still open at the end: closed where the run stopped.
    int open_task = 0;
    int open_park = 0;
    for (const auto& r : track.records) {
      open_task += r.what == trace::event::task_begin ? 1 : r.what == trace::event::task_end ? -1 : 0;
      open_park += r.what == trace::event::park_begin ? 1 : r.what == trace::event::park_end ? -1 : 0;
    }
    const std::uint64_t end =
        std::max<std::uint64_t>(now_ns() + 1, track.records.empty() ? 0 : track.records.back().ns + 1);
    if (open_task > 0) track.records.push_back({end, 0, 0, 0, 0, trace::event::task_end, false});
    if (open_park > 0) track.records.push_back({end, 0, 0, 0, 0, trace::event::park_end, false});
    tracks.push_back(std::move(track));
  }
  return tracks;
}

trace::summary scheduler::write_trace(const std::string& path) const {
  return trace::write_chrome_json(path, trace_tracks());
}

}  // namespace pools::sim
