// SPDX-License-Identifier: MIT
// src/parking.cpp — waiting and waking: the protocol every fiber primitive is built on.
#include <pools/fibers/detail/runtime.hpp>
#include <pools/operation_cancelled.hpp>
#include <pools/unhandled_exception.hpp>

#include <utility>

#include "scheduler.hpp"

namespace pools::fibers::detail {

namespace {

void unlock_spinlock(context*, void* lock) noexcept {
  static_cast<pools::spinlock*>(lock)->unlock();
}

struct timed_park {
  waiter* w = nullptr;
  pools::spinlock* lock = nullptr;  // nullptr for a plain sleep
};

// Arms the timer *before* releasing the primitive's lock: a waker that claims the waiter through
// the primitive then always finds the timer armed, so the woken fiber's cancel() cannot miss it.
void arm_timer(context*, void* arg) noexcept {
  auto& p = *static_cast<timed_park*>(arg);
  pools::spinlock* lock = p.lock;  // read before add(): after it the timer may fire and resume the fiber
  scheduler& s = *p.w->fiber->owner;
  const bool earliest = s.timers().add(*p.w, std::move(p.w->timer_entry));  // made by waiter(deadline)
  if (lock != nullptr) lock->unlock();
  if (earliest) s.timer_armed_earliest();  // a parked worker may be sleeping past the new deadline
}

struct join_wait {
  task_base* task;
  waiter* w;
};

// Runs after the joiner's registers are saved. If the task finished meanwhile, the CAS fails and
// the joiner is made runnable at once; either way the joiner's stack (where join_wait lives) is
// not touched after the CAS.
void publish_join_waiter(context* from, void* arg) noexcept {
  auto& j = *static_cast<join_wait*>(arg);
  std::uintptr_t expected = 0;
  if (!j.task->state.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(j.w),
                                             std::memory_order_acq_rel, std::memory_order_acquire)) {
    auto* f = static_cast<fiber_record*>(from);
    f->owner->schedule(f);
  }
}

void requeue_self(context* from, void*) noexcept {
  auto* f = static_cast<fiber_record*>(from);
  f->owner->requeue(f);
}

// The joiner runs the task itself: same effects as scheduler::run_task, minus the rendezvous,
// since the only party that could be waiting is the caller. In a trace it is the task slice of
// the queued entry (taken back from the deque, or claimed: that entry is later dropped unrun).
// The child runs under its own stop token, not the joiner's: a task spawned without one reads
// none, whether a worker or its joiner runs it (the one of a spawn(token, f) is set by its
// callable, stop_scope.hpp).
// Inlined into its two callers in wait_for_task: an out-of-line call costs about 20 instructions
// per inline join (bench/instructions.py, fibers/fork_join).
[[gnu::always_inline]] inline void run_inline(task_base& t, worker& w) noexcept {
#if POOLS_TRACE
  const trace_slice slice = trace_begin(*current_worker(), POOLS_TRACE_ID(&t));
#endif
  fiber_record* const self = w.current->is_fiber ? static_cast<fiber_record*>(w.current) : nullptr;
  const std::stop_token* const joiner_token = self != nullptr ? self->stop_token : nullptr;
  if (joiner_token != nullptr) self->stop_token = nullptr;
  t.run(t);
  if (joiner_token != nullptr) self->stop_token = joiner_token;
  t.state.store(task_base::done_bit, std::memory_order_release);
  bump(current_worker()->completed);  // read again: t.run may have moved this fiber to another worker
#if POOLS_TRACE
  trace_end(slice, POOLS_TRACE_ID(&t));
#endif
}

}  // namespace

// ---- runtime.hpp -----------------------------------------------------------------------------

fiber_record* current_fiber() noexcept {
  worker* w = current_worker();
  return w != nullptr && w->current->is_fiber ? static_cast<fiber_record*>(w->current) : nullptr;
}

scheduler* current_scheduler() noexcept {
  worker* w = current_worker();
  return w != nullptr ? w->sched : nullptr;
}

const std::stop_token* current_stop_token() noexcept {
  const fiber_record* f = current_fiber();
  return f != nullptr ? f->stop_token : nullptr;
}

const std::stop_token* exchange_stop_token(const std::stop_token* token) noexcept {
  fiber_record* f = current_fiber();
  return f != nullptr ? std::exchange(f->stop_token, token) : nullptr;
}

const std::stop_token* cancellation_point() {
  const std::stop_token* token = current_stop_token();
  if (token == nullptr || !token->stop_possible()) return nullptr;
  if (token->stop_requested()) throw operation_cancelled();
  return token;
}

void submit(scheduler& s, task_base* t) {
  s.submit(t);
}

void wait_for_task(task_base& t) {
  sync_point("join");
  if ((t.state.load(std::memory_order_acquire) & task_base::done_bit) != 0) return;
  if (worker* w = current_worker(); w != nullptr && w->sched == t.owner) {
    const std::uintptr_t item = item_of(&t);
    // Entries at our bottom whose tasks were already run inline by their joiners (claimed, see
    // below) are dead references: drop them now, while they are cache-hot, rather than letting
    // them pile up until this fiber's task ends (a fork-join tree joined in spawn order would
    // otherwise leave one per node, and thieves would waste their steals on them).
    for (std::uintptr_t bottom; (bottom = peek_item(w->deque)) != 0 && bottom != item;) {
      task_base* stale = is_fiber_item(bottom) ? nullptr : task_of(bottom);
      if (stale == nullptr || !stale->joinable || !stale->claimed.load(std::memory_order_relaxed)) break;
      if (pop_item(w->deque) != bottom) break;  // a thief took it (and will drop it)
      release(stale);
    }
    // The fast path of fork-join: the child is still the newest entry of our own deque. Taking
    // it back makes us the only holder of both references (queue entry and handle).
    if (peek_item(w->deque) == item && pop_item(w->deque) == item) {
      run_inline(t, *w);
      t.refs.store(1, std::memory_order_relaxed);  // the queue's reference, dropped in place
      return;
    }
    // Elsewhere in a queue (deeper in ours, in another worker's after a migration, or in the
    // injection queue) but not started: claim it; the stale queue entry is dropped when popped.
    if (!t.claimed.load(std::memory_order_relaxed) && !t.claimed.exchange(true, std::memory_order_acq_rel)) {
      run_inline(t, *w);
      return;
    }
  }
  waiter me;
  if (me.fiber != nullptr) {
    if (simulation* sim = me.fiber->owner->simulated()) sim->waits_on("join", &t);
    join_wait j{&t, &me};
    suspend_current({&publish_join_waiter, &j});
  } else {
    std::uintptr_t expected = 0;
    if (t.state.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(&me),
                                        std::memory_order_acq_rel, std::memory_order_acquire)) {
      me.parker->wait();
    }
  }
  // acquire: pairs with run_task's release, so the result written by another worker is visible.
  (void)t.state.load(std::memory_order_acquire);
}

void detach_task(task_base& t) noexcept {
  const std::uintptr_t old = t.state.fetch_or(task_base::detached_bit, std::memory_order_acq_rel);
  if ((old & task_base::done_bit) != 0 && t.error) report_unhandled_exception(t.error);
  release(&t);
}

void yield_fiber() {
  worker& w = *current_worker();
  if (w.sched == nullptr) {
    // A simulated worker: back home, and the simulation queues this fiber behind the others
    // (requeue_self -> inject): whether another fiber runs first is the seed's choice.
    suspend_to(w.home, {&requeue_self, nullptr});
    return;
  }
  const std::uintptr_t item = w.sched->find_work(w);
  if (item == 0) return;  // nothing else wants to run
  context* next = w.sched->context_for(w, item);
  suspend_to(next != nullptr ? *next : w.home, {&requeue_self, nullptr});  // home: see suspend_current
}

void simulated_sync_point(const char* operation) noexcept {
  fiber_record* f = current_fiber();
  if (f == nullptr) return;  // a plain thread: nothing to switch
  simulation* sim = f->owner->simulated();
  if (sim == nullptr) return;  // a real pool's fiber, while a simulated pool exists elsewhere
  // The fiber's next step is queued before the switch, as a sleep's timer is armed (below): one
  // thread runs everything, so nothing runs it before this step ends. When that fails (out of
  // memory) there is no point: the fiber goes on, and the run stops at the end of the step.
  if (sim->point_before(operation, f)) suspend_current({});
}

void sleep_fiber_until(std::chrono::steady_clock::time_point deadline) {
  const std::stop_token* stop = cancellation_point();  // stopped: throws, also for a past deadline
  if (deadline <= clock_now()) return;
  waiter me(deadline);  // may throw std::bad_alloc (its timer's entry): nothing refers to it yet
  if (stop != nullptr) {
    // A cancellable sleep is a timed wait on a primitive of its own, which only the stop
    // callback ever wakes (waiter.hpp has the handshake).
    pools::spinlock gate;
    wait_queue queue;
    me.watch_stop(stop, gate, queue);
    std::unique_lock lock(gate);
    if (me.stop_requested()) {
      lock.unlock();
      me.on_stop.reset();  // before `queue` and `gate` go: the callback may be on its way to them
      throw operation_cancelled();
    }
    queue.push_back(me);
    // Woken by the "primitive": the stop took it out. park_until deregistered the callback.
    if (park_until(me, lock, deadline, "sleep", nullptr)) throw operation_cancelled();
    std::lock_guard again(gate);
    queue.erase(me);  // timed out: still queued
    return;
  }
  if (simulation* sim = me.fiber->owner->simulated()) {
    // A timer of the virtual clock. One thread runs everything, so it can be armed before the
    // switch: nothing can fire it until this step has ended.
    sim->arm_timer(me, deadline);
    suspend_current({});
    return;
  }
  timed_park p{&me, nullptr};
  suspend_current({&arm_timer, &p});
  // Only the timer can claim a sleeper under no token, and it has disarmed itself before waking us.
}

// ---- waiter.hpp ------------------------------------------------------------------------------

waiter::waiter() : fiber(current_fiber()) {
  if (fiber == nullptr) parker.emplace();
}

waiter::waiter(std::chrono::steady_clock::time_point deadline) : waiter() {
  // A thread waits on its parker's condition variable, a simulated fiber on the virtual clock:
  // only a fiber of a real pool files an entry in its scheduler's timer queue.
  if (fiber != nullptr && fiber->owner->simulated() == nullptr)
    timer_entry = timer_queue::make_node(*this, deadline);
}

void waiter::watch_stop(const std::stop_token* token, pools::spinlock& lock, wait_queue& queue) {
  stop_token = token;
  if (token != nullptr) on_stop.emplace(*token, stop_waker{this, &lock, &queue});
}

void stop_waker::operator()() const noexcept {
  std::unique_lock guard(*lock);
  // Not queued: not yet (the waiter checks the token under this lock before it queues) or no
  // longer (a waker took it). Queued but claimed: a timer took it, and the waiter erases itself.
  if (!w->linked || !w->try_claim()) return;
  queue->erase(*w);
  w->cancelled = true;
  guard.unlock();
  wake(*w);  // the last touch of the waiter: it deregisters this callback before it goes on
}

void wake(waiter& w) noexcept {
  if (fiber_record* f = w.fiber) {
    f->owner->schedule(f);
  } else {
    w.parker->wake();
  }
}

std::chrono::steady_clock::time_point clock_now() noexcept {
  if (const fiber_record* f = current_fiber(); f != nullptr) {
    if (const simulation* sim = f->owner->simulated()) return sim->now();
  }
  return std::chrono::steady_clock::now();
}

void park(waiter& w, std::unique_lock<pools::spinlock>& lock, const char* what, const void* object) {
  pools::spinlock* l = lock.release();
  if (w.fiber != nullptr) {
    if (simulation* sim = w.fiber->owner->simulated()) sim->waits_on(what, object);
    suspend_current({&unlock_spinlock, l});
    w.on_stop.reset();  // waits for a stop callback still running elsewhere (it finds w taken)
  } else {
    l->unlock();
    w.parker->wait();
  }
}

bool park_until(waiter& w, std::unique_lock<pools::spinlock>& lock,
                std::chrono::steady_clock::time_point deadline, const char* what, const void* object) {
  pools::spinlock* l = lock.release();
  if (w.fiber != nullptr) {
    if (simulation* sim = w.fiber->owner->simulated()) {
      // As sleep_fiber_until: a virtual timer, armed before the switch; the primitive's lock is
      // released after it (a waker that claims w finds the timer armed, as on a real pool).
      sim->waits_on(what, object);
      sim->arm_timer(w, deadline);
      suspend_current({&unlock_spinlock, l});
      w.on_stop.reset();
      if (w.timed_out) return false;
      sim->cancel_timer(w);
      return true;
    }
    timed_park p{&w, l};  // w.timer_entry, made by waiter(deadline) before w was queued
    suspend_current({&arm_timer, &p});
    w.on_stop.reset();  // as in park()
    if (w.timed_out) return false;
    w.fiber->owner->timers().cancel(w);  // woken by the primitive: the timer must not outlive w
    return true;
  }
  l->unlock();
  if (w.parker->wait_until(deadline)) return true;
  if (w.try_claim()) return false;  // a real timeout: no waker will touch w
  w.parker->wait();                 // a waker claimed w first; let its wake() finish with it
  return true;
}

}  // namespace pools::fibers::detail
