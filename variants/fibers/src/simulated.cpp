// SPDX-License-Identifier: MIT
// The fiber pool's simulator seam (pools/fibers/simulated.hpp): a fiber scheduler made with a
// simulation (src/scheduler.hpp), and the simulation that turns its queued items into steps.
#include <pools/fibers/simulated.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "scheduler.hpp"

namespace pools::fibers {

namespace detail {

class simulation_adapter final : public simulation {
 public:
  simulation_adapter(pools::sim::scheduler& engine, const stack_options& stack)
      : engine_(&engine), scheduler_(options_with(stack), *this), epoch_(std::chrono::steady_clock::now()) {
    // From now on the primitives' sync_point() looks for a simulated fiber (detail/waiter.hpp).
    simulated_pools.fetch_add(1, std::memory_order_relaxed);
  }
  simulation_adapter(const simulation_adapter&) = delete;
  simulation_adapter& operator=(const simulation_adapter&) = delete;

  ~simulation_adapter() {
    simulated_pools.fetch_sub(1, std::memory_order_relaxed);
    // Fibers whose task is not done are suspended for good (a failed run): their stacks go back
    // unrun (discard_fiber). Then every task loses the reference this pool kept (start()); an unfinished one
    // is destroyed outright — the handles that also point to it lived on those stacks, or in run().
    for (const auto& [id, s] : tasks_)
      if (s.fiber != nullptr && !done(*s.task)) discard_fiber(s.fiber);
    scheduler_.end_simulated();
    for (const auto& [id, s] : tasks_) {
      if (done(*s.task)) {
        release(s.task);
      } else {
        s.task->destroy(s.task);
      }
    }
  }

  scheduler& fiber_scheduler() noexcept { return scheduler_; }

  void start(task_base* t, std::string name, bool posted) {
    if (name.empty()) {
      if (engine_->in_step()) {
        const pools::sim::task_id parent = engine_->current_task();
        name = engine_->name_of(parent) + "." + std::to_string(++forks_[parent]);
      } else {
        name = posted ? "post " + std::to_string(++posted_) : "fiber " + std::to_string(++spawned_);
      }
    }
    const pools::sim::task_id id = engine_->new_task(std::move(name));
    // What may throw first (then the caller destroys t, which nothing refers to yet)...
    tasks_.emplace(id, started{t, nullptr});
    try {
      task_ids_.emplace(t, id);
      ready(id, item_of(t));
    } catch (...) {
      tasks_.erase(id);
      task_ids_.erase(t);
      throw;
    }
    // ...then this pool's reference, dropped in the destructor: a task stays readable (done?
    // its error?) for as long as the pool, whoever else lets go of it.
    t->refs.fetch_add(1, std::memory_order_relaxed);
    if (engine_->in_step()) engine_->annotate("spawns " + engine_->name_of(id));
  }

  void run_to_end(task_base& t) {
    try {
      engine_->run();
      if (failure_) std::rethrow_exception(std::exchange(failure_, {}));  // (failed between steps)
    } catch (...) {
      if (done(t)) release(&t);  // the handle run() would have made
      throw;
    }
    if (!done(t)) {
      throw pools::sim::deadlock_error(
          "deadlock at step " + std::to_string(engine_->steps()) +
              ": the fiber run() started did not finish, nothing can run, and no fiber waits on a primitive "
              "the simulator sees",
          {});
    }
  }

  // ---- simulation ----------------------------------------------------------------------------

  void queued(std::uintptr_t item) noexcept override {
    try {
      if (!is_fiber_item(item)) {  // a task submitted through the scheduler itself: a task of its own
        start(task_of(item), {}, false);
        return;
      }
      make_ready(fiber_of(item), item);
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void make_ready(fiber_record* f, std::uintptr_t item) {
    const pools::sim::task_id id = task_of_fiber(f);
    if (engine_->in_step())
      engine_->annotate(id == engine_->current_task() ? "yields" : "wakes " + engine_->name_of(id));
    ready(id, item);
  }

  void waits_on(const char* what, const void* object) noexcept override {
    try {
      const pools::sim::task_id id = engine_->current_task();
      std::string where = what;
      if (const auto joined = task_ids_.find(object); joined != task_ids_.end()) {
        where +=
            " of task " + std::to_string(joined->second) + " \"" + engine_->name_of(joined->second) + "\"";
      } else {
        char address[32];
        std::snprintf(address, sizeof address, " %p", object);
        where += address;
      }
      engine_->annotate(std::string("waits on ") + what);
      engine_->waiting(id, std::move(where));
    } catch (...) {
      fail(std::current_exception());
    }
  }

  bool point_before(const char* operation, fiber_record* f) noexcept override {
    try {
      ready(task_of_fiber(f), item_of(f));
    } catch (...) {
      fail(std::current_exception());
      return false;
    }
    engine_->point_before(operation);
    return true;
  }

  void arm_timer(waiter& w, std::chrono::steady_clock::time_point deadline) noexcept override {
    try {
      arm(w, deadline);
    } catch (...) {
      fail(std::current_exception());  // unarmed: the step rethrows it, and the run stops
    }
  }

  void arm(waiter& w, std::chrono::steady_clock::time_point deadline) {
    const pools::sim::task_id id = engine_->current_task();
    const auto at = pools::sim::virtual_clock::time_point(
        std::chrono::duration_cast<pools::sim::virtual_clock::duration>(std::max(deadline, epoch_) - epoch_));
    char until[64];
    std::snprintf(until, sizeof until, "sleeps until %.6f s",
                  static_cast<double>(at.time_since_epoch().count()) / 1e9);
    engine_->annotate(until);
    timers_[&w] = engine_->at(std::max(at, engine_->now()), id, [this, &w] {
      timers_.erase(&w);
      // As the timer queue fires (src/timer_queue.hpp): claimed by the timer, or already by the
      // primitive, which has made the fiber ready itself.
      if (!w.try_claim()) return;
      w.timed_out = true;
      step(item_of(w.fiber));
    });
  }

  void cancel_timer(waiter& w) noexcept override {
    if (const auto it = timers_.find(&w); it != timers_.end()) {
      engine_->cancel(it->second);
      timers_.erase(it);
    }
  }

  std::chrono::steady_clock::time_point now() const noexcept override {
    return epoch_ +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(engine_->now().time_since_epoch());
  }

 private:
  static pool_options options_with(const stack_options& stack) {
    pool_options o;
    o.threads = 1;
    o.stack = stack;
    return o;
  }
  static bool done(const task_base& t) noexcept {
    return (t.state.load(std::memory_order_acquire) & task_base::done_bit) != 0;
  }

  // The first failure of a call that cannot throw (see `simulation`): rethrown by the step.
  void fail(std::exception_ptr e) noexcept {
    if (!failure_) failure_ = std::move(e);
  }

  // The unfinished task a fiber runs. (A fiber that finished a task may run another later:
  // the earlier one is done.) A run has a handful of tasks: a look at each is cheap.
  pools::sim::task_id task_of_fiber(const fiber_record* f) const {
    for (const auto& [id, s] : tasks_)
      if (s.fiber == f && !done(*s.task)) return id;
    throw std::logic_error("pools::fibers::simulated: a fiber of no task was queued");
  }

  void ready(pools::sim::task_id id, std::uintptr_t item) {
    engine_->ready(id, [this, item] { step(item); });
  }

  // One step: the fiber of `item` runs until it waits, yields or ends.
  void step(std::uintptr_t item) {
    const pools::sim::task_id id = engine_->current_task();
    started& s = tasks_.at(id);
    task_base& t = *s.task;
    if (done(t)) return;                          // (a timer that lost its claim to a wake: nothing to run)
    s.fiber = &scheduler_.simulated_fiber(item);  // the task's fiber from its first step on
    scheduler_.run_simulated(*s.fiber);
    if (failure_) std::rethrow_exception(std::exchange(failure_, {}));  // stops the run
    if (!done(t)) return;
    engine_->annotate("finishes");
    // A detached fiber's exception has been reported (as on the pools); here it stops the run too.
    if ((t.state.load(std::memory_order_acquire) & task_base::detached_bit) != 0 && t.error)
      std::rethrow_exception(t.error);
  }

  pools::sim::scheduler* engine_;
  scheduler scheduler_;
  std::chrono::steady_clock::time_point epoch_;  // virtual time 0 on the steady_clock
  struct started {
    task_base* task;      // with this pool's reference (start())
    fiber_record* fiber;  // the fiber it runs on, from its first step; nullptr before
  };
  std::map<pools::sim::task_id, started> tasks_;  // every task started
  std::map<const void*, pools::sim::task_id> task_ids_;
  std::map<waiter*, pools::sim::scheduler::timer_id> timers_;
  std::map<pools::sim::task_id, std::size_t> forks_;  // fibers spawned per task, for names
  std::size_t spawned_ = 0;
  std::size_t posted_ = 0;
  std::exception_ptr failure_;
};

}  // namespace detail

simulated::simulated(pools::sim::scheduler& sim, const stack_options& stack)
    : sim_(&sim), adapter_(std::make_unique<detail::simulation_adapter>(sim, stack)) {}

simulated::~simulated() = default;

detail::scheduler& simulated::scheduler() noexcept {
  return adapter_->fiber_scheduler();
}

void simulated::start(detail::task_base* t, const std::string& name, bool posted) {
  try {
    adapter_->start(t, name, posted);
  } catch (...) {
    t->destroy(t);  // not started: no one else holds it
    throw;
  }
}

void simulated::run_to_end(detail::task_base& t) {
  adapter_->run_to_end(t);
}

}  // namespace pools::fibers
