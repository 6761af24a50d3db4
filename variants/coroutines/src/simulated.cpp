// SPDX-License-Identifier: MIT
// The coroutine pool's simulator seam (pools/coroutines/simulated.hpp).
#include <pools/coroutines/simulated.hpp>

#include <cstdio>
#include <string>
#include <utility>

namespace pools::coroutines {

simulated::simulated(pools::sim::scheduler& sim) : sim_(&sim) {
  notes_waits_ = true;
}

simulated::~simulated() {
  // A run that failed or deadlocked leaves started tasks suspended: destroying a root destroys
  // its frame and, through the task it owns or awaits, the frames below it.
  for (auto& r : roots_)
    if (r) std::exchange(r, {}).destroy();
}

simulated::root simulated::call(pools::unique_function<void()> f) {
  f();
  co_return;
}

void simulated::post(pools::unique_function<void()> f) {
  start(call(std::move(f)), "post " + std::to_string(++posted_));
}

void simulated::start(root r, std::string name) {
  r.handle.promise().pool = this;
  r.handle.promise().index = roots_.size();
  roots_.push_back(r.handle);
  ready(sim_->new_task(std::move(name)), r.handle);
}

void simulated::ready(pools::sim::task_id t, std::coroutine_handle<> h) {
  sim_->ready(t, [this, h] { step(h); });
}

namespace {
// For the length of a step this thread belongs to the pool: current_scheduler(), which when_all
// and the primitives ask, answers it. Restored however the step ends.
struct belongs_to {
  explicit belongs_to(scheduler* pool) noexcept : previous(std::exchange(detail::tl_scheduler, pool)) {}
  belongs_to(const belongs_to&) = delete;
  belongs_to& operator=(const belongs_to&) = delete;
  ~belongs_to() { detail::tl_scheduler = previous; }
  scheduler* previous;
};
}  // namespace

void simulated::step(std::coroutine_handle<> h) {
  {
    belongs_to here(this);
    h.resume();
  }
  end_step();
}

void simulated::attempt_step(std::coroutine_handle<> h, const char* operation,
                             pools::unique_function<bool()>& attempt) {
  {
    belongs_to here(this);
    // The rest of the primitive's await_suspend: it may suspend h (a wait) or not. Its
    // not_suspended() asks wait_cancelled(), which must not queue h again (see there). An
    // exception here has no co_await left to be thrown from: it stops the run.
    attempting_ = h.address();
    struct clear {
      void*& slot;
      ~clear() { slot = nullptr; }
    } on_exit{attempting_};
    const bool suspended = attempt();
    attempting_ = nullptr;  // before h runs on: its next waits are not this one
    if (!suspended) {
      sim_->annotate(std::string(operation) + " went through");
      h.resume();
    }
  }
  end_step();
}

void simulated::end_step() {
  // Waits begun in this step and not cancelled are real: the coroutine is suspended on them.
  for (auto& [address, w] : pending_) {
    sim_->annotate("waits on " + w.kind);
    sim_->waiting(w.task, std::move(w.what));
    waiting_[address] = w.task;
  }
  pending_.clear();
  if (failure_) std::rethrow_exception(std::exchange(failure_, {}));  // stops the run
}

void simulated::enqueue(std::coroutine_handle<> h) {
  void* const address = h.address();
  if (const auto w = waiting_.find(address); w != waiting_.end()) {  // woken: its own task
    const pools::sim::task_id t = w->second;
    waiting_.erase(w);
    ready(t, h);
    return;
  }
  if (const auto p = pending_.find(address); p != pending_.end()) {  // woken in the same step
    const pools::sim::task_id t = p->second.task;
    pending_.erase(p);
    ready(t, h);
    return;
  }
  // A fork (when_all's children): a task of its own, named after the task that forked it.
  const pools::sim::task_id parent = sim_->current_task();
  const pools::sim::task_id child =
      sim_->new_task(sim_->name_of(parent) + "." + std::to_string(++forks_[parent]));
  sim_->annotate("forks " + sim_->name_of(child));
  ready(child, h);
}

void simulated::yield(std::coroutine_handle<> h) {
  ready(sim_->current_task(), h);
  sim_->annotate("yields");
}

void simulated::add_timer(pools::sim::virtual_clock::time_point deadline, std::coroutine_handle<> h) {
  const pools::sim::task_id t = sim_->current_task();
  sim_->at(deadline, t, [this, h] { step(h); });
  sim_->annotate("sleeps until " +
                 std::to_string(static_cast<double>(deadline.time_since_epoch().count()) / 1e9) + " s");
}

void simulated::wait_begins(std::coroutine_handle<> h, const char* what, const void* object) noexcept {
  try {
    char where[32];
    std::snprintf(where, sizeof where, " %p", object);
    pending_[h.address()] = {sim_->current_task(), what + std::string(where), what};
  } catch (...) {
    fail(std::current_exception());  // out of memory: the step rethrows it
  }
}

bool simulated::wait_cancelled(std::coroutine_handle<> h) noexcept {
  const bool deferred = h.address() == attempting_;
  if (const auto p = pending_.find(h.address()); p != pending_.end()) {
    if (!deferred) sim_->annotate(p->second.kind + " went through: yields");
    pending_.erase(p);
  }
  // After defer() the point came before the operation: go on (attempt_step resumes h).
  if (deferred) return false;
  // The operation went through without waiting. On a pool another thread may run anything
  // between it and the coroutine's next statement, so here another task may run first: a yield.
  try {
    ready(sim_->current_task(), h);  // a yield, annotated above
    return true;
  } catch (...) {
    fail(std::current_exception());  // out of memory: go on, the step rethrows it
    return false;
  }
}

void simulated::defer(std::coroutine_handle<> h, const char* operation,
                      pools::unique_function<bool()> attempt) {
  sim_->ready(sim_->current_task(), [this, h, operation, attempt = std::move(attempt)]() mutable {
    attempt_step(h, operation, attempt);
  });
  sim_->point_before(operation);
}

void simulated::fail(std::exception_ptr e) noexcept {
  if (!failure_) failure_ = std::move(e);
}

void simulated::run_to_end() {
  sim_->run();
}

void simulated::throw_unfinished() const {
  throw pools::sim::deadlock_error(
      "deadlock at step " + std::to_string(sim_->steps()) +
          ": the task run() started did not finish, nothing can run, and no task waits on a primitive the "
          "simulator sees (an awaitable that kept its handle?)",
      {});
}

}  // namespace pools::coroutines
