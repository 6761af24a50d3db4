// SPDX-License-Identifier: MIT
// src/scheduler.cpp — the worker loop, work stealing, parking, and draining shutdown.
#include "scheduler.hpp"

#include <pools/cpu_relax.hpp>
#include <pools/detail/seq_cst_fence.hpp>
#include <pools/thread_count.hpp>
#include <pools/thread_name.hpp>
#include <pools/unhandled_exception.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

namespace pools::fibers::detail {

namespace {
thread_local worker* tls_worker = nullptr;

// How many times an idle worker re-scans the queues before it parks. Spinning briefly keeps
// fork-join cheap (a steal usually appears within microseconds) without burning a core when idle.
constexpr int spin_rounds = 32;

void backoff(int round) noexcept {
  for (int i = 0; i < 32; ++i) pools::cpu_relax();
  if (round > 8) std::this_thread::yield();  // let another thread have the core we are wasting
}

// Ends every idle fiber of `w`, from w's home: each leaves fiber_main and its stack is freed.
void end_idle_fibers(worker& w) noexcept {
  while (fiber_record* f = w.idle) {
    w.idle = f->next_idle;
    --w.idle_count;
    f->exit_requested = true;
    w.pending_from = &w.home;
    w.pending_action = {};
    w.current = f;
    switch_context(w.home, *f);
  }
}

void become_idle(context* from, void*) noexcept {
  worker& w = *current_worker();
  auto* f = static_cast<fiber_record*>(from);
  f->next_idle = w.idle;
  w.idle = f;
  ++w.idle_count;
}
}  // namespace

// Out of line, with a compiler barrier: see detail/runtime.hpp on why a fiber must re-read the
// thread pointer after every potential switch.
[[gnu::noinline]] worker* current_worker() noexcept {
  asm volatile("" ::: "memory");
  return tls_worker;
}

void fatal(const char* what) noexcept {
  std::fprintf(stderr, "pools::fibers: fatal: %s\n", what);
  std::fflush(stderr);
  std::abort();
}

// ---- construction and shutdown -------------------------------------------------------------

scheduler::scheduler(const pool_options& options)
    : hook_(options.park_hook), stacks_(options.stack), idle_limit_(options.idle_fibers_per_worker) {
  const std::size_t threads = pools::thread_count(options.threads);  // 0: one per hardware thread
  if (threads > 4096) {
    throw std::invalid_argument("pools::fibers::thread_pool: " + std::to_string(threads) +
                                " threads is more than the 4096 supported");
  }
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) workers_.push_back(std::make_unique<worker>(*this, i));
  try {
    for (auto& w : workers_) {
      worker* raw = w.get();
      w->thread = std::thread([this, raw] { worker_main(*raw); });
      pools::name_thread(w->thread, "fibers-" + std::to_string(raw->index));
    }
  } catch (...) {
    // A thread could not start (std::system_error). No destructor runs for a constructor that
    // throws, and a joinable std::thread destroyed unjoined calls std::terminate: stop and join
    // the workers that did start (nothing was submitted yet, so the drain is immediate).
    shutdown();
    throw;
  }
}

scheduler::~scheduler() {
  shutdown();
}

// Drain, as pools::Executor requires. Quiescence is detected from counters, not queues: a task
// blocked on a channel is in no queue, yet it is alive. Every task bumps `created` on the worker
// (or external counter) that made it, and `completed` on the worker that finished it. Reading
// all `completed` first and all `created` second can only overestimate what is alive: a
// completion we saw happened after its creation, which is therefore visible to the later read.
// So created == completed means nothing was alive between the two reads, and nothing can come
// alive afterwards (only a live task or an outside poster creates tasks; the latter is excluded
// by the contract once destruction has begun).
bool scheduler::quiescent() const noexcept {
  std::uint64_t completed = 0, created = 0;
  // acquire loads: no later load (of `created`) may be performed before them.
  for (const auto& w : workers_) completed += w->completed.load(std::memory_order_acquire);
  created = external_created_.load(std::memory_order_acquire);
  for (const auto& w : workers_) created += w->created.load(std::memory_order_acquire);
  return created == completed;
}

void scheduler::shutdown() {
  if (joined_) return;
  if (sim_ != nullptr) {  // no threads, nothing queued: end_simulated() has ended the fibers
    joined_ = true;
    return;
  }
  if (worker* me = current_worker(); me != nullptr && me->sched == this) {
    fatal("a thread_pool was destroyed by one of its own fibers (it would wait for itself)");
  }
  stopping_.store(true, std::memory_order_relaxed);
  while (!quiescent()) {
    // Workers notify when they park while stopping; the timeout covers a notify that raced
    // with this check.
    std::unique_lock lock(park_mutex_);
    quiesce_cv_.wait_for(lock, std::chrono::milliseconds(1));
  }
  {
    std::lock_guard lock(park_mutex_);
    shut_down_ = true;
    if (hook_ != nullptr) {
      for (auto& w : workers_) hook_->wake(static_cast<unsigned>(w->index));
    }
  }
  park_cv_.notify_all();  // (not traced as wakes: they end the workers, they bring no work)
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();  // not joinable: its start failed (constructor)
  }
  joined_ = true;
  // What can be left in the queues now is stale entries of tasks their joiners ran inline (each
  // holds a reference): nothing alive, no fiber. Drop them.
  auto drop = [](std::uintptr_t item) {
    if (!is_fiber_item(item)) release(task_of(item));
  };
  for (auto& w : workers_) {
    while (const std::uintptr_t item = pop_item(w->deque)) drop(item);
  }
  for (const std::uintptr_t item : injected_) drop(item);
  injected_.clear();
}

pool_statistics scheduler::stats() const {
  pool_statistics s;
  s.fibers_created = fibers_created_.load(std::memory_order_relaxed);
  s.fibers_alive = fibers_alive_.load(std::memory_order_relaxed);
  s.stacks = stacks_.stats();
  return s;
}

// ---- queues --------------------------------------------------------------------------------

void scheduler::submit(task_base* t) {
  worker* w = current_worker();
  if (w != nullptr && w->sched == this) {
    bump(w->created);  // before the push: a thief may finish the task before we return
    POOLS_TRACE_POST(this, POOLS_TRACE_ID(t));
    try {
      w->deque.push(item_of(t));  // may throw std::bad_alloc (the ring grows); then unchanged
    } catch (...) {
      // Not queued: take the count back (only this worker writes it), or the drain would wait
      // for a task that never runs. The caller deletes the task and gets the exception.
      w->created.store(w->created.load(std::memory_order_relaxed) - 1, std::memory_order_release);
      throw;
    }
    notify_one_if_sleeping();
  } else {
    inject(item_of(t), true);
  }
}

// noexcept: a fiber is woken from places that cannot report a failure (a channel's hand-over, a
// timer, a completion). Its item cannot be lost either, so when the worker's own queue cannot grow
// (out of memory; each push then leaves its queue unchanged) it goes to the injection queue,
// whose fallback for fibers allocates nothing (inject).
void scheduler::schedule(fiber_record* f) noexcept {
  worker* w = current_worker();
  try {
    // (Traced before the push, as before any push: once pushed, another worker may run it.)
    if (w != nullptr && w->sched == this && w->in_hook) {
      POOLS_TRACE_POST(this, POOLS_TRACE_ID(f));
      w->io_ready.push(item_of(f));  // the owner is awake: find_work takes them (no wake)
      return;
    }
    if (w != nullptr && w->sched == this) {
      POOLS_TRACE_POST(this, POOLS_TRACE_ID(f));
      w->deque.push(item_of(f));
      notify_one_if_sleeping();
      return;
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory, f is queued below instead
  }
  inject(item_of(f), false);
}

void scheduler::requeue(fiber_record* f) noexcept {
  inject(item_of(f), false);
}

void scheduler::inject(std::uintptr_t item, bool new_task) {
  if (sim_ != nullptr) {  // a simulated scheduler's every queued item: the seed says when it runs
    sim_->queued(item);
    return;
  }
  // Notify *before* releasing the lock. When an outside thread wakes a fiber (a channel send
  // from main()), that fiber may be the last live work of a pool that is being destroyed: once a
  // worker can pop it, the pool can finish draining and free itself. No worker can pop it while
  // we hold the lock, and the unlock is our last access to *this.
  std::lock_guard lock(inject_mutex_);
  try {
    injected_.push_back(item);  // may throw std::bad_alloc; then nothing is queued
  } catch (...) {
    // A new task is refused: nothing was counted, and the caller gets the exception. A woken
    // fiber cannot be refused (schedule() is noexcept): it joins the overflow queue.
    if (new_task) throw;
    fiber_record* f = fiber_of(item);
    f->next_overflow = nullptr;
    if (overflow_tail_ != nullptr) {
      overflow_tail_->next_overflow = f;
    } else {
      overflow_head_ = f;
    }
    overflow_tail_ = f;
    ++overflow_size_;
  }
  // Counted after the push, under the lock, so before any worker can pop it: a refused task
  // left no count behind for the drain to wait on.
  if (new_task) external_created_.fetch_add(1, std::memory_order_release);
  POOLS_TRACE_POST(this, trace_id(item));
  POOLS_TRACE_QUEUE_DEPTH(this, injected_.size());
  // relaxed: the fence in notify_one_if_sleeping orders it before the read of sleepers_ (Dekker:
  // see there); the lock orders it with the other stores of the mirror.
  injected_size_.store(injected_.size() + overflow_size_, std::memory_order_relaxed);
  notify_one_if_sleeping();
}

// The wake-up half of a Dekker (store-buffering) handshake with park(): the caller has published
// work with a store (a deque's bottom, released by push(); the injection queue's size; the earliest
// timer), and we then issue a seq_cst fence and read `sleepers_`; a parking worker increments
// `sleepers_`, issues a seq_cst fence, then re-reads those same variables. The two fences are
// ordered one way or the other in the single seq_cst order, and whichever comes second sees the
// store the other side made before its fence: no worker sleeps through work it should have taken.
// The fence is the price (one per spawn) — see README, "The scheduler". Under ThreadSanitizer it is an
// RMW of one shared word, which TSan sees as the same ordering (pools/detail/seq_cst_fence.hpp).
void scheduler::notify_one_if_sleeping() noexcept {
  pools::detail::seq_cst_fence();
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    // Taking the lock orders this notify after a parking worker's re-check (it holds the lock
    // from its increment until it waits), so the notify cannot fall in between.
    std::unique_lock lock(park_mutex_);
    if (hook_ != nullptr) {
      // A hook's wake is aimed at one worker. One that marked itself sleeping (under this lock,
      // after its re-check) and has no wake on its way yet gets it; the hook keeps a wake that
      // comes before the worker blocks (pools/park_hook.hpp), so it cannot fall in between either.
      // Never the calling worker: it is marked sleeping while a completion runs inside its park,
      // and waking it would leave the work it just pushed to no one until that completion ends.
      const worker* self = current_worker();
      for (auto& w : workers_) {
        if (w->sleeping && !w->woken && w.get() != self) {
          w->woken = true;
          POOLS_TRACE_WAKE(this, w->index);
          hook_->wake(static_cast<unsigned>(w->index));
          break;
        }
      }
      return;
    }
    lock.unlock();
    POOLS_TRACE_WAKE_ANY(this);  // a condition variable: whichever worker it picks
    park_cv_.notify_one();
  }
}

std::uintptr_t scheduler::pop_injected(worker& w) {
  if (injected_size_.load(std::memory_order_relaxed) == 0) return 0;
  std::lock_guard lock(inject_mutex_);
  if (fiber_record* f = overflow_head_) {  // the overflow first: it holds fibers woken earlier
    overflow_head_ = f->next_overflow;
    if (overflow_head_ == nullptr) overflow_tail_ = nullptr;
    --overflow_size_;
    injected_size_.store(injected_.size() + overflow_size_, std::memory_order_relaxed);
    return item_of(f);
  }
  if (injected_.empty()) return 0;
  const std::uintptr_t item = injected_.front();
  injected_.pop_front();
  // Take a share of the rest in one go, onto our deque, where other workers can steal it: one
  // lock round trip per batch instead of per task when an outside thread posts many tasks.
  // Pushed before it is popped: a deque that cannot grow (out of memory) leaves the rest here.
  const std::size_t share = std::min<std::size_t>(injected_.size() / workers_.size(), 32);
  try {
    for (std::size_t i = 0; i < share; ++i) {
      w.deque.push(injected_.front());
      injected_.pop_front();
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory, the rest stays in the injection queue
  }
  injected_size_.store(injected_.size() + overflow_size_, std::memory_order_relaxed);
  POOLS_TRACE_QUEUE_DEPTH(this, injected_.size());
  return item;
}

std::uintptr_t scheduler::steal(worker& w) {
  const std::size_t n = workers_.size();
  if (n == 1) return 0;
  // xorshift: a cheap, per-worker random start, so thieves do not all hit worker 0 first.
  w.rng ^= w.rng << 13;
  w.rng ^= w.rng >> 17;
  w.rng ^= w.rng << 5;
  const std::size_t start = w.rng % n;
  for (std::size_t k = 0; k < n; ++k) {
    worker& victim = *workers_[(start + k) % n];
    if (&victim == &w) continue;
    // A lost race moves on to the next victim, as an empty deque does.
    if (const auto r = victim.deque.steal(); r.status == pools::steal_status::success) {
      // (The pool does not count steals. A stolen stale entry, a task its joiner already ran, is
      // a steal too: find_work then drops it.)
      POOLS_TRACE_STEAL(this, trace_id(r.value), victim.index);
      return r.value;
    }
  }
  return 0;
}

std::uintptr_t scheduler::take_io_ready(worker& w) noexcept {
  std::uintptr_t item = 0;
  w.io_ready.pop(item);
  return item;
}

void scheduler::poll_hook(worker& w) {
  w.in_hook = true;
  hook_->poll(static_cast<unsigned>(w.index));  // the fibers it wakes go to w.io_ready
  w.in_hook = false;
}

std::uintptr_t scheduler::find_work(worker& w, bool poll_io) {
  for (;;) {
    std::uintptr_t item = 0;
    // Every 61st look starts at the shared queue, so work from outside and yielded fibers are
    // not starved by a worker that keeps feeding its own deque (Go's scheduler does the same).
    if (++w.tick % 61 == 0) {
      w.poll_due = hook_ != nullptr;  // the same tick serves the park hook's I/O
      item = pop_injected(w);
    }
    if (w.poll_due && poll_io) {
      w.poll_due = false;
      poll_hook(w);
    }
    // Fibers woken by I/O and the deque take turns (odd ticks: I/O first), so neither a stream of
    // completions nor a deque full of timer wake-ups or forks can hold the other back.
    if (item == 0 && (w.tick & 1) != 0) item = take_io_ready(w);
    if (item == 0) item = pop_item(w.deque);
    if (item == 0) item = take_io_ready(w);
    if (item == 0 && timers_.due()) {
      timers_.fire();  // woken fibers land on this worker's deque
      item = pop_item(w.deque);
    }
    if (item == 0) item = pop_injected(w);
    if (item == 0) item = steal(w);
    if (item == 0) return 0;
    if (is_fiber_item(item)) return item;
    task_base* t = task_of(item);
    // A joinable task may have been run inline by its joiner; this queue entry is then just a
    // reference to drop. Posted tasks have no joiner and skip the atomic exchange.
    if (t->joinable && (t->claimed.load(std::memory_order_relaxed) ||
                        t->claimed.exchange(true, std::memory_order_acq_rel))) {
      release(t);
      continue;
    }
    return item;
  }
}

bool scheduler::work_visible() const noexcept {
  // The parker's half of the handshake (notify_one_if_sleeping): after the increment of sleepers_,
  // before the re-reads. With it, looks_empty()'s relaxed loads see a bottom published before the
  // submitter's fence.
  pools::detail::seq_cst_fence();
  if (injected_size_.load(std::memory_order_seq_cst) != 0 || timers_.due()) return true;
  for (const auto& w : workers_) {
    if (!w->deque.looks_empty()) return true;
  }
  return false;
}

// ---- running tasks and fibers ------------------------------------------------------------------

fiber_record* scheduler::new_fiber() {
  fiber_record* f = create_fiber(*this);  // may throw: no stack could be mapped
  fibers_created_.fetch_add(1, std::memory_order_relaxed);
  fibers_alive_.fetch_add(1, std::memory_order_relaxed);
  return f;
}

context* scheduler::context_for(worker& w, std::uintptr_t item) noexcept {
  if (is_fiber_item(item)) return fiber_of(item);
  fiber_record* f = w.idle;
  if (f != nullptr) {
    w.idle = f->next_idle;
    --w.idle_count;
  } else {
    try {
      f = new_fiber();
    } catch (...) {
      // Out of memory for a stack (mmap failed), on a worker: no caller is waiting to be told.
      // The task is the one that asked for the stack, so it carries the error, as if it had
      // thrown it; the pool goes on (ending the process here would lose every other task).
      w.stackless = task_of(item);
      w.stackless_error = std::current_exception();
      return nullptr;
    }
  }
  f->first_task = task_of(item);
  return f;
}

void scheduler::fail_stackless(worker& w) noexcept {
  task_base* t = std::exchange(w.stackless, nullptr);
  if (t == nullptr) return;
  t->error = std::exchange(w.stackless_error, nullptr);
  finish_task(t);
}

void scheduler::run_task(task_base* t) noexcept {
#if POOLS_TRACE
  const trace_slice slice = trace_begin(*current_worker(), POOLS_TRACE_ID(t));
#endif
  t->run(*t);
  finish_task(t);
#if POOLS_TRACE
  trace_end(slice, POOLS_TRACE_ID(t));  // (only the address: t may be gone)
#endif
}

void scheduler::finish_task(task_base* t) noexcept {
  // acq_rel: release publishes the result to the joiner; acquire sees a waiter's record.
  const std::uintptr_t old = t->state.fetch_or(task_base::done_bit, std::memory_order_acq_rel);
  if ((old & task_base::detached_bit) != 0) {
    if (t->error) report_unhandled_exception(t->error);
  } else if (const std::uintptr_t w = old & ~task_base::flag_bits; w != 0) {
    wake(*reinterpret_cast<waiter*>(w));
  }
  worker* w = current_worker();  // re-read: the task may have migrated us
  release(t);
  bump(w->completed);  // last: after this the pool may consider the task gone
}

context* fiber_main(fiber_record& self) noexcept {
  scheduler& s = *self.owner;
  for (;;) {
    if (task_base* t = std::exchange(self.first_task, nullptr)) s.run_task(t);
    // Run on this stack as long as there are tasks: a task is only moved to another fiber when
    // this one has to wait (then the worker continues this loop on another fiber).
    worker* w = current_worker();
    std::uintptr_t item = 0;
    while ((item = s.find_work(*w)) != 0 && !is_fiber_item(item)) {
      s.run_task(task_of(item));
      w = current_worker();
    }
    context* next = item != 0 ? static_cast<context*>(fiber_of(item)) : &w->home;
    w->current = next;
#if POOLS_TRACE
    trace_leave(*w, POOLS_TRACE_ID(&self));  // the slice of a woken fiber ends here, if still open
#endif
    if (w->idle_count >= s.idle_fiber_limit()) {
      // Enough fibers are kept for reuse: end this one; its stack returns to the stack pool.
      w->pending_from = nullptr;
      w->pending_action = {};
      return next;
    }
    w->pending_from = &self;
    w->pending_action = {&become_idle, nullptr};
    switch_context(self, *next);
    // Taken from the idle list: either to run a task (first_task) or, at shutdown, to end.
    if (self.exit_requested) {
      w = current_worker();
      w->pending_from = nullptr;
      w->pending_action = {};
      w->current = &w->home;
      return &w->home;
    }
  }
}

void suspend_to(context& next, post_switch_action action) noexcept {
  worker& w = *current_worker();
  context& self = *w.current;
  POOLS_TRACE_FIBER_SUSPEND(POOLS_TRACE_ID(&self));
#if POOLS_TRACE
  trace_leave(w, POOLS_TRACE_ID(&self));
#endif
  w.pending_from = &self;
  w.pending_action = action;
  w.current = &next;
  switch_context(self, next);
#if POOLS_TRACE
  // Resumed: taken from a queue as a fiber item (every way back is one: schedule, requeue), by
  // whoever switched here, on this thread. This run is that item's slice. `w` is the worker we
  // left from (a local on this fiber's stack): a different one now means a migration.
  worker& now = *current_worker();
  trace_begin(now, POOLS_TRACE_ID(&self));
  POOLS_TRACE_FIBER_RESUME(POOLS_TRACE_ID(&self));
  if (&now != &w) POOLS_TRACE_FIBER_MIGRATE(POOLS_TRACE_ID(&self), w.index);
#endif
}

void suspend_current(post_switch_action action) noexcept {
  worker& w = *current_worker();
  // A suspending fiber must not poll (see find_work). When a poll is due, it suspends to the
  // worker's home instead, which polls right after publishing this fiber: a connection loop
  // that only ever suspends (never ends) would otherwise see its I/O polled only when the deque
  // runs dry, and a burst of ready fibers would delay every completion until its end.
  // A simulated worker (sched == nullptr) goes home as well: the simulator picks what runs next.
  const std::uintptr_t item = w.poll_due || w.sched == nullptr ? 0 : w.sched->find_work(w, false);
  context* next = item != 0 ? w.sched->context_for(w, item) : nullptr;
  suspend_to(next != nullptr ? *next : w.home, action);  // (home also ends a task left stackless)
}

// ---- the worker thread ---------------------------------------------------------------------

void scheduler::worker_main(worker& w) {
  tls_worker = &w;
  prepare_home(w.home);
  POOLS_TRACE_WORKER(this, "fibers", static_cast<unsigned>(w.index));
  for (;;) {
    fail_stackless(w);  // a task for which no fiber could be made, here or on the fiber that came home
    std::uintptr_t item = find_work(w);
    for (int round = 0; item == 0 && round < spin_rounds; ++round) {
      backoff(round);
      if (hook_ != nullptr) poll_hook(w);
      item = find_work(w);
    }
    if (item != 0) {
      context* next = context_for(w, item);
      if (next == nullptr) continue;  // no stack for the task: it fails, above
      w.pending_from = &w.home;
      w.pending_action = {};
      w.current = next;
      switch_context(w.home, *next);  // back when a fiber runs out of work or ends
      continue;
    }
    if (!park(w)) break;
  }
  // Shut down: nothing is alive, every fiber of this worker is idle. End them.
  end_idle_fibers(w);
  tls_worker = nullptr;
}

// ---- a simulated scheduler (see `simulation` in scheduler.hpp) --------------------------------

// A simulated scheduler: one worker, no thread. The worker belongs to no scheduler (sched ==
// nullptr): submit() and schedule() then take their "not one of our workers" branch to inject(),
// which hands the item to the simulation, and join() never runs a child inline (the child is a
// task of the simulation of its own, run when the seed picks it). It is in workers_ all the same,
// so that find_work() — which a fiber calls when its task ends — sees one worker, nothing to
// steal and empty queues, and sends the fiber home: the end of the simulator's step.
scheduler::scheduler(const pool_options& options, simulation& sim)
    : sim_(&sim), hook_(nullptr), stacks_(options.stack), idle_limit_(options.idle_fibers_per_worker) {
  workers_.push_back(std::make_unique<worker>(*this, 0));
  workers_[0]->sched = nullptr;
}

worker* exchange_current_worker(worker* w) noexcept {
  return std::exchange(tls_worker, w);
}

fiber_record& scheduler::simulated_fiber(std::uintptr_t item) {
  worker& w = *workers_[0];
  context* c = context_for(w, item);
  if (c == nullptr) {
    // No stack: context_for left the task and the error on the worker, for a real worker to
    // end the task with. A simulated step has a caller instead: the run stops with the error,
    // and the task is destroyed with the other unfinished ones.
    w.stackless = nullptr;
    std::rethrow_exception(std::exchange(w.stackless_error, nullptr));
  }
  return *static_cast<fiber_record*>(c);
}

void scheduler::run_simulated(fiber_record& next) {
  worker& w = *workers_[0];
  // For the length of the step this thread is the simulated worker: the fiber primitives find
  // their fiber, and their scheduler, through it.
  worker* const previous = exchange_current_worker(&w);
  prepare_home(w.home);
  w.pending_from = &w.home;
  w.pending_action = {};
  w.current = &next;
  switch_context(w.home, next);  // back when the fiber waits, yields or runs out of work
  exchange_current_worker(previous);
}

void scheduler::end_simulated() noexcept {
  worker& w = *workers_[0];
  worker* const previous = exchange_current_worker(&w);
  prepare_home(w.home);
  end_idle_fibers(w);  // as a real worker's do at shutdown (worker_main)
  w.current = &w.home;
  exchange_current_worker(previous);
}

bool scheduler::park(worker& w) {
  std::unique_lock lock(park_mutex_);
  if (shut_down_) return false;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);  // the other half of notify_one_if_sleeping
  if (!work_visible()) {
    if (stopping_.load(std::memory_order_relaxed)) quiesce_cv_.notify_all();
    const auto deadline = timers_.earliest();
    if (hook_ != nullptr) {
      // Blocks without the lock: the hook runs I/O completions, which schedule fibers (and so
      // take the lock in notify_one_if_sleeping). Returns early after one of them ran.
      w.sleeping = true;
      lock.unlock();
      w.in_hook = true;
      POOLS_TRACE_PARK_BEGIN(this);
      hook_->park(static_cast<unsigned>(w.index), deadline);
      POOLS_TRACE_PARK_END(this);
      w.in_hook = false;
      lock.lock();
      w.sleeping = false;
      w.woken = false;
    } else if (deadline == timer_queue::clock::time_point::max()) {
      POOLS_TRACE_PARK_BEGIN(this);
      park_cv_.wait(lock);
      POOLS_TRACE_PARK_END(this);
    } else {
      POOLS_TRACE_PARK_BEGIN(this);
      park_cv_.wait_until(lock, deadline);
      POOLS_TRACE_PARK_END(this);
    }
  }
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return !shut_down_;
}

}  // namespace pools::fibers::detail
