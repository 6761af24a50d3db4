// SPDX-License-Identifier: MIT
// The scheduler behind pools::coroutines::thread_pool: worker loop, stealing, parking, draining.
// The protocol is summarised in thread_pool.hpp and drawn in the README ("Parking").
#include <pools/coroutines/frame_stack.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/cpu_relax.hpp>
#include <pools/detail/seq_cst_fence.hpp>
#include <pools/futex.hpp>
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace pools::coroutines {

namespace detail {

constinit thread_local worker* tl_worker = nullptr;

void detached_done(thread_pool* pool) noexcept {
  pool->task_finished();
}

std::coroutine_handle<> finish_detached(std::coroutine_handle<> self, thread_pool* pool,
                                        std::exception_ptr error) noexcept {
  self.destroy();  // captured state dies before the task counts as finished (the drain waits for both)
  if (error) report_unhandled_exception(std::move(error));
  detached_done(pool);
  return next_local_work();
}

}  // namespace detail

namespace {

using clock = std::chrono::steady_clock;

// Spinning: rounds of "look everywhere once, then pause". About 20-40 microseconds in all on a
// current x86 core: longer than the gap between a fork and the next one in fine-grained
// fork/join (so a thief does not fall asleep between two pushes of its victim), much shorter than
// a futex round trip plus the cost of sleeping while work arrives.
constexpr unsigned spin_rounds = 64;
constexpr unsigned pauses_per_round = 16;

inline std::uint64_t xorshift(std::uint64_t& s) noexcept {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

inline void run(void* h) {
  POOLS_TRACE_TASK_BEGIN(POOLS_TRACE_ID(h));
  std::coroutine_handle<>::from_address(h).resume();
  POOLS_TRACE_TASK_END(POOLS_TRACE_ID(h));
}

}  // namespace

// threads == 0: one worker per hardware thread (pools/thread_count.hpp), as in every pool; idle_
// is sized from the same count.
thread_pool::thread_pool(std::size_t threads, pools::park_hook* hook)
    : hook_(hook), idle_((pools::thread_count(threads) + 63) / 64) {
  threads = pools::thread_count(threads);
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) {
    workers_.push_back(std::make_unique<detail::worker>(this, static_cast<unsigned>(i)));
  }
  threads_.reserve(threads);
  try {
    for (std::size_t i = 0; i < threads; ++i) {
      threads_.emplace_back([this, i] { worker_main(*workers_[i]); });
    }
  } catch (...) {
    // seq_cst: the same store-buffering pair as in the destructor.
    stopping_.store(true, std::memory_order_seq_cst);
    wake_all();
    for (auto& t : threads_) t.join();
    throw;
  }
}

thread_pool::~thread_pool() {
  assert(!on_worker_thread() && "a thread_pool must not be destroyed by one of its own tasks");
  close_room();  // submissions waiting for room end now: the drain below need not wait for them
  // seq_cst, with task_finished()'s seq_cst increment and load: store-buffering. Either all_finished()
  // sees the last increment, or that thread sees draining_ and notifies under the mutex (held there too).
  draining_.store(true, std::memory_order_seq_cst);
  {
    std::unique_lock lock(drain_mutex_);
    drain_cv_.wait(lock, [this] { return all_finished(); });
  }
  // seq_cst, then the fence in wake_all(): pairs with park()'s "set idle bit; fence; read
  // stopping_". A worker either sees the flag before sleeping or has its bit seen and is woken.
  stopping_.store(true, std::memory_order_seq_cst);
  wake_all();
  for (auto& t : threads_) t.join();
  // A thread outside the pool may still be inside inject() or add_timer(), after the point where
  // the coroutine it submitted became visible: that coroutine may have run and let this
  // destructor start (a sync_wait returned, an event set from another thread resumed its waiter).
  // Its increment of submitters_ happens before that, so this load sees it or the decrement;
  // acquire pairs with the decrement's release: its last touch of the pool is then over.
  // (tests/searching_test.cpp holds such a submitter in the park hook's wake().)
  while (submitters_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

void thread_pool::task_finished() noexcept {
  // Counted where it finishes: on a worker of this pool in that worker's own counter, so the
  // finish touches no line a poster writes. seq_cst increment and seq_cst load of draining_: the
  // store-buffering pair of the destructor's (see there). With the counts split, no finish knows
  // it is the last one, so during a drain every finish notifies (under the mutex, so the
  // predicate check cannot miss it); before the drain none does.
  detail::worker* w = own_worker();
  auto& finished = w != nullptr ? w->finished : finished_outside_;
  finished.fetch_add(1, std::memory_order_seq_cst);
  if (draining_.load(std::memory_order_seq_cst)) {
    std::lock_guard lock(drain_mutex_);
    drain_cv_.notify_all();
  }
}

bool thread_pool::all_finished() const noexcept {
  // The finished counts first, then the started ones; all seq_cst. Every count only grows. A
  // task's start is counted before its handle is published (start_counted), so it happens before
  // its finish is counted; a load here that sees that finish (acquire: it synchronises with the
  // increment) therefore makes the later loads of the started counts see its start too. So the
  // tasks whose finish the first sum counts are among those the second sum counts, and equal sums
  // mean every counted start has finished — including tasks started by a task that finished.
  // The other order can miss a task that a finishing task started between the two sums:
  // common/model/park_coroutines_model.cpp, mutant 9.
  std::int64_t finished = finished_outside_.load(std::memory_order_seq_cst);
  for (const auto& w : workers_) finished += w->finished.load(std::memory_order_seq_cst);
  std::int64_t started = started_outside_.load(std::memory_order_seq_cst);
  for (const auto& w : workers_) started += w->started.load(std::memory_order_seq_cst);
  return finished == started;
}

void thread_pool::worker_main(detail::worker& w) {
  detail::tl_worker = &w;             // this pool's fast paths (when_all's fork, finishing coroutines)
  frame_stack::attach_this_thread();  // stack_task frames go on this worker's stack of frames
  detail::tl_scheduler = this;        // what every pool sets (scheduler.hpp)
  POOLS_TRACE_WORKER(this, "coroutines", w.index);
  void* h = nullptr;
  // A worker a waker chose (park() returned `woken`) starts as a searcher: submissions it may be
  // meant for see it searching and wake nobody else, so it must pass the duty on (below).
  bool woken = false;
  for (;;) {
    if (!woken) {
      // Fairness: every so often look outside the deque first, so a worker deep in fork/join
      // still serves timers and external submissions.
      if (++w.ticks >= detail::fairness_interval) {
        w.ticks = 0;
        poll_hook(w);
        // The deque's turn here: its newest item, or with a park hook its oldest (see there).
        if (take_timers(w, h) || take_injected(w, h) || take_tick_item(w, h)) {
          run(h);
          continue;
        }
      }
      // The ready FIFO (I/O wake-ups; with a park hook, timers too) and the deque take turns.
      // Under more load than the worker can serve neither ever empties, and the one always taken
      // second starved (server/README.md, "The /sleep tail": a p99 of 1 s at 1,000 connections).
      const bool deque_first = (w.ticks & 1) != 0;  // ticks: a counter of steps, good as a coin
      if ((deque_first && w.deque.pop(h)) || w.io_ready.pop(h) || w.deque.pop(h) || find_remote(w, h)) {
        run(h);
        continue;
      }
    }
    woken = false;

    // Out of work (or just woken): search actively for a while. relaxed: searching_ is read by
    // submitters after their seq_cst fence, and the decrement below is followed by one before
    // this worker looks at the idle bits (see wake_searcher()).
    searching_.fetch_add(1, std::memory_order_relaxed);
    bool found = false;
    for (unsigned round = 0; round < spin_rounds && !found; ++round) {
      if (hook_ != nullptr) {
        poll_hook(w);
        found = w.io_ready.pop(h) || w.deque.pop(h);
        if (found) break;
      }
      found = find_remote(w, h);
      if (!found) {
        for (unsigned k = 0; k < pauses_per_round; ++k) pools::cpu_relax();
      }
    }
    // relaxed: see above. Whether this was the last searcher decides who keeps searching.
    const bool last_searcher = searching_.fetch_sub(1, std::memory_order_relaxed) == 1;
    if (found) {
      // The searching hole: a submission that saw this worker searching woke nobody,
      // and the item found here may be another one. Before running it (possibly for long), the
      // last searcher wakes a parked worker, which searches in turn (Tokio's rule).
      if (last_searcher) wake_searcher();
      run(h);
      continue;
    }

    switch (park(w, h, last_searcher)) {
      case park_result::found_work:
        run(h);
        break;
      case park_result::woken:
        woken = true;
        break;
      case park_result::returned:
        break;
      case park_result::stop:
        detail::tl_worker = nullptr;
        detail::tl_scheduler = nullptr;
        frame_stack::detach_this_thread();
        return;
    }
  }
}

void thread_pool::poll_hook(detail::worker& w) {
  if (hook_ == nullptr) return;
  w.in_hook = true;
  hook_->poll(w.index);  // the coroutines its completions resume go to w.io_ready
  w.in_hook = false;
}

bool thread_pool::find_remote(detail::worker& w, void*& out) {
  return take_timers(w, out) || take_injected(w, out) || steal(w, out);
}

bool thread_pool::take_timers(detail::worker& w, void*& out) {
  const std::int64_t next = timers_.next_deadline();
  if (next == detail::timer_queue::never) return false;  // no clock read while no timer exists
  const std::int64_t now = detail::timer_queue::to_ns(clock::now());
  if (now < next) return false;
  // A batch on the stack, not a vector: this runs on a worker, where a std::bad_alloc would have
  // no caller to go to. Timers due beyond the batch are taken on the next look.
  constexpr std::size_t max_batch = 32;
  std::coroutine_handle<> due[max_batch];
  const std::size_t n = timers_.take_due(now, due, max_batch);
  if (n == 0) return false;
  out = due[0].address();
  if (hook_ != nullptr) return queue_ready_timers(w, due + 1, n - 1, n == max_batch);  // see there
  for (std::size_t i = n; i-- > 1;) w.deque.push(due[i].address());  // reversed: deadline order
  // Fenced, unlike a fork's wake_hint(): these were due to run now, and this worker may run the
  // first one for long (the searching hole).
  if (n > 1) wake_for_new_work();
  return true;
}

bool thread_pool::take_injected(detail::worker& w, void*& out) {
  // A batch, so that a burst of external submissions costs one lock per batch and spreads out:
  // a fair share of what is queued, the extra items to this worker's deque, where idle workers
  // steal them. (The queue's own relaxed hint skips the lock while it looks empty; in park() the
  // seq_cst fence before this call orders that read against the submitter's fence.)
  constexpr std::size_t max_batch = 32;
  void* batch[max_batch];
  const std::size_t n = injected_.try_pop_batch(
      batch, max_batch, [this](std::size_t queued) { return 1 + queued / workers_.size(); });
  if (n == 0) return false;
  injected_count_.fetch_add(n, std::memory_order_relaxed);  // relaxed: a statistic, once per batch
  POOLS_TRACE_QUEUE_DEPTH(this, injected_.size());
  out = batch[0];
  for (std::size_t i = n; i-- > 1;) w.deque.push(batch[i]);
  // Fenced, unlike a fork's wake_hint(): the submitters of these items may have skipped their
  // wake for a searcher, and this worker may now run batch[0] for long (the searching hole). A
  // worker parking meanwhile steals them in its last look, or its idle bit is seen here.
  if (n > 1) wake_for_new_work();
  return true;
}

bool thread_pool::steal(detail::worker& w, void*& out) {
  const std::size_t n = workers_.size();
  if (n == 1) return false;
  const std::size_t start = static_cast<std::size_t>(xorshift(w.rng) % n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t v = (start + k) % n;
    if (v == w.index) continue;
    for (int attempt = 0; attempt < 2; ++attempt) {  // a lost race means the victim had items: retry once
      const auto r = workers_[v]->deque.steal();
      if (r.status == pools::steal_status::success) {
        out = r.value;
        steals_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        POOLS_TRACE_STEAL(this, POOLS_TRACE_ID(out), v);
        return true;
      }
      if (r.status == pools::steal_status::empty) break;
    }
  }
  return false;
}

// Parking. The worker announces itself (parked = 1, its bit in idle_), fences, and looks for work
// one last time; only then does it sleep. A submitter publishes work, fences, and looks for an
// announced worker. The two seq_cst fences are ordered one way or the other in the single total
// order of seq_cst operations; whichever comes second sees what the other side stored before its
// fence. So "worker sleeps" and "submitter sees no sleeper" cannot both happen.
thread_pool::park_result thread_pool::park(detail::worker& w, void*& out, bool last_searcher) {
  // relaxed: published by the release half of set_idle() to a waker, whose store of 0 must then
  // come after this 1 in the word's modification order.
  w.parked.store(1, std::memory_order_relaxed);
  set_idle(w.index);
  // seq_cst: the worker's half of the store-buffering handshake (see above).
  pools::detail::seq_cst_fence();
  if (find_remote(w, out)) {
    // The item found may not be the one a submitter meant (a batch can be a single item), so the
    // duty to keep searching is passed on, as when a search ends with work (worker_main):
    if (!clear_idle(w.index)) {
      // A waker chose this worker after our fence, for an item it published before its own
      // fence: fence again (after clear_idle() read the waker's CAS) and wake another.
      wake_searcher();
    } else if (last_searcher && any_idle() && work_visible()) {
      // The last searcher: the fence above follows the decrement of searching_, which is what
      // wake_searcher()'s fence is for.
      wake_one();
    }
    return park_result::found_work;
  }
  // relaxed: ordered by the fence above against the destructor's seq_cst store and fence.
  if (stopping_.load(std::memory_order_relaxed)) {
    clear_idle(w.index);
    return park_result::stop;
  }
  parks_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
  POOLS_TRACE_PARK_BEGIN(this);
  for (;;) {
    // acquire: pairs with the waker's release store of 0; the work it published is visible.
    if (w.parked.load(std::memory_order_acquire) == 0) break;
    const std::int64_t deadline = timers_.next_deadline();
    std::chrono::nanoseconds timeout{-1};  // no timer: sleep until woken
    if (deadline != detail::timer_queue::never) {
      timeout = std::chrono::nanoseconds(deadline - detail::timer_queue::to_ns(clock::now()));
      if (timeout.count() <= 0) break;  // a timer is due: go and run it
    }
    if (hook_ != nullptr) {
      // Returns after a wake, at the deadline, or once it has run foreign work — which may have
      // pushed onto our deque: back to the loop in every case (an early return costs one spin).
      w.in_hook = true;  // the completions it runs resume onto w.io_ready
      hook_->park(w.index, deadline == detail::timer_queue::never
                               ? clock::time_point::max()
                               : clock::time_point(std::chrono::nanoseconds(deadline)));
      w.in_hook = false;
      break;
    }
    pools::futex_wait(w.parked, 1, timeout);
  }
  POOLS_TRACE_PARK_END(this);
  // Our bit already cleared: a waker chose this worker, and it counts on it to search.
  return clear_idle(w.index) ? park_result::returned : park_result::woken;
}

void thread_pool::set_idle(unsigned index) noexcept {
  // release: publishes parked = 1 (stored just before) to the waker that clears this bit.
  idle_[index / 64].fetch_or(std::uint64_t{1} << (index % 64), std::memory_order_release);
}

bool thread_pool::clear_idle(unsigned index) noexcept {
  const std::uint64_t bit = std::uint64_t{1} << (index % 64);
  // acq_rel: acquire reads the release of a waker that cleared the bit first (so its work is
  // visible); release keeps the word's RMW chain a release sequence for later readers.
  return (idle_[index / 64].fetch_and(~bit, std::memory_order_acq_rel) & bit) != 0;
}

bool thread_pool::wake_one(std::size_t skip) noexcept {
  for (std::size_t k = 0; k < idle_.size(); ++k) {
    const std::uint64_t mask = ~skip_mask(k, skip);
    // relaxed: only a first guess; the CAS re-reads the word with the orders that matter.
    std::uint64_t bits = idle_[k].load(std::memory_order_relaxed);
    while ((bits & mask) != 0) {
      const std::uint64_t candidates = bits & mask;
      const std::uint64_t bit = candidates & (~candidates + 1);  // the lowest one
      // acq_rel on success: acquire pairs with set_idle()'s release, so the worker's parked = 1
      // is visible and our 0 below is ordered after it; release hands everything this thread did
      // before (the work it published) to the worker's acquire in park()/clear_idle().
      // relaxed on failure: we only retry with the fresh value.
      if (idle_[k].compare_exchange_weak(bits, bits & ~bit, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
        detail::worker& v = *workers_[k * 64 + static_cast<std::size_t>(std::countr_zero(bit))];
        // release: pairs with the acquire load in park()'s sleep loop.
        v.parked.store(0, std::memory_order_release);
        POOLS_TRACE_WAKE(this, v.index);
        if (hook_ != nullptr)
          hook_->wake(v.index);
        else
          pools::futex_wake(v.parked, 1);
        wakes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
        return true;
      }
    }
  }
  return false;
}

void thread_pool::wake_for_new_work() noexcept {
  // seq_cst: the submitter's half of the handshake (see park()), after the work was published.
  pools::detail::seq_cst_fence();
  // relaxed: ordered by the fence. A searching worker will find the item or park, and parking
  // re-checks after its own fence; if it finds other work instead and is the last searcher, it
  // wakes another (wake_searcher()). So no wake is needed while someone searches.
  if (searching_.load(std::memory_order_relaxed) == 0) wake_one();
}

void thread_pool::wake_searcher() noexcept {
  // seq_cst: this worker's decrement of searching_ (or the waker's choice of it) comes before this
  // fence. A submitter that skipped its wake because it read the count before that decrement has
  // its fence before ours in the single order of seq_cst operations, so the idle bits read below
  // include every worker that parked without seeing the submitter's item; and the worker woken
  // here reads the queues after this fence (release/acquire through the idle word and `parked`),
  // so it sees the item. (docs/model-checking.md: model_park_coroutines_mutant5.)
  pools::detail::seq_cst_fence();
  // Only if some worker is parked and work is left for it: for the same reason, the skipped
  // submitter's item is visible here (or already taken). A wake-up of an idle pool (one item) so
  // costs no second futex wake before the task runs.
  if (any_idle() && work_visible()) wake_one();
}

bool thread_pool::any_idle() const noexcept {
  for (const auto& word : idle_) {
    if (word.load(std::memory_order_relaxed) != 0) return true;  // relaxed: after a fence (callers)
  }
  return false;
}

bool thread_pool::work_visible() const noexcept {
  // relaxed all: called after a seq_cst fence, which orders these loads after the fence of the
  // submitter whose item matters (wake_searcher()); a stale "yes" costs one wake-up.
  if (injected_.maybe_nonempty_relaxed()) return true;
  if (timers_.next_deadline() != detail::timer_queue::never) return true;  // someone must sleep till it
  for (const auto& v : workers_) {
    if (!v->deque.looks_empty()) return true;
  }
  return false;
}

void thread_pool::wake_all() noexcept {
  // seq_cst: the submitter's half of the handshake, for the stop flag stored before the call.
  pools::detail::seq_cst_fence();
  while (wake_one()) {
  }
}

// A thread inside inject() or add_timer(), counted in submitters_ from its first touch of the
// pool to its last. The decrement is in a destructor so that it also runs when the push throws
// std::bad_alloc: a count left behind would keep the pool's destructor spinning forever.
class thread_pool::submitter {
 public:
  explicit submitter(std::atomic<std::uint32_t>& count) noexcept : count_(count) {
    // relaxed: sequenced before the push, which publishes the item; whatever the pushed coroutine
    // does, and so a destruction that depends on it, happens after this increment.
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  // release: the last touch of the pool. The destructor waits for 0 with acquire (see there).
  ~submitter() { count_.fetch_sub(1, std::memory_order_release); }
  submitter(const submitter&) = delete;
  submitter& operator=(const submitter&) = delete;

 private:
  std::atomic<std::uint32_t>& count_;
};

void thread_pool::inject(std::coroutine_handle<> h) {
  const submitter counted(submitters_);
  POOLS_TRACE_POST(this, POOLS_TRACE_ID(h.address()));
  injected_.push(h.address());  // publishes with a seq_cst store (two_lock_queue.hpp); may throw
  POOLS_TRACE_QUEUE_DEPTH(this, injected_.size());
  wake_for_new_work();
}

void thread_pool::add_timer(std::chrono::steady_clock::time_point deadline, std::coroutine_handle<> h) {
  const submitter counted(submitters_);
  POOLS_TRACE_POST(this, POOLS_TRACE_ID(h.address()));  // into the timer queue
  if (timers_.add(deadline, h)) {  // may throw std::bad_alloc (the heap grows): h is then not queued
    // The new earliest deadline: a parked worker may be sleeping past it; the parker reads
    // next_deadline() after its fence.
    wake_for_new_work();
  }
}

thread_pool::statistics thread_pool::stats() const noexcept {
  // relaxed: statistics.
  return {steals_.load(std::memory_order_relaxed),  parks_.load(std::memory_order_relaxed),
          wakes_.load(std::memory_order_relaxed),   injected_count_.load(std::memory_order_relaxed),
          refused_.load(std::memory_order_relaxed), waited_.load(std::memory_order_relaxed)};
}

// With a park hook the worker runs an event loop, and a due timer is a wake-up like an I/O
// completion: it joins the ready FIFO, in deadline order. On the LIFO deque a later batch went on
// top of an earlier one, and under a load that never let the deque empty, the earliest deadlines
// waited longest. Not stealable there: an idle worker takes the next due timers from the heap
// itself, so one is woken only when the batch was full (more may be due).
bool thread_pool::queue_ready_timers(detail::worker& w, const std::coroutine_handle<>* due, std::size_t n,
                                     bool more) {
  for (std::size_t i = 0; i < n; ++i) w.io_ready.push(due[i].address());
  if (more) wake_for_new_work();
  return true;
}

// The fairness tick's item from the own deque. Without a park hook the newest, as on every other
// step: fork-join stays depth-first. With one, the oldest: a server's worker keeps refilling its
// deque with new jobs, and under more load than it can serve the deque never empties, so its
// bottom item would wait as long as the overload lasts; the oldest every tick bounds that wait
// (tests/park_hook_test.cpp, "not starved"). The owner may steal from its own deque as any thief
// may; a lost race means another thief took the item, and the next one is tried.
bool thread_pool::take_tick_item(detail::worker& w, void*& out) {
  if (hook_ == nullptr) return w.deque.pop(out);
  for (;;) {
    const auto r = w.deque.steal();
    if (r.status == pools::steal_status::success) {
      out = r.value;
      return true;
    }
    if (r.status == pools::steal_status::empty) return false;
  }
}

// As add_timer(), for a sleep under a stop token. The stop check is under the timer queue's lock,
// so a stop callback's cancel_timer() (same lock) either comes after the add and takes the
// timer back, or comes before it, and then the add sees the stop and queues nothing.
bool thread_pool::add_cancellable_timer(std::chrono::steady_clock::time_point deadline,
                                        std::coroutine_handle<> h, const std::stop_token& stop,
                                        std::uint64_t& id) {
  const submitter counted(submitters_);
  POOLS_TRACE_POST(this, POOLS_TRACE_ID(h.address()));                // into the timer queue
  const auto added = timers_.add_cancellable(deadline, h, stop, id);  // may throw std::bad_alloc
  if (added == detail::timer_queue::added::no) return false;
  if (added == detail::timer_queue::added::earliest) wake_for_new_work();
  return true;
}

// ---- Room: bounded submission ----------------------------------------------------------------
//
// A place in the queue is taken by a CAS on queued_ (below the capacity, or unconditionally for a
// worker's post) and given back by the admitted coroutine's first act (detail::run_admitted_*),
// or by the submitter if starting it failed. A submission that finds no room and may wait joins a
// FIFO under room_mutex_: a thread blocks on its own condition variable, a coroutine stays
// suspended. Whoever gives a place back hands the free places to the head of the FIFO.
//
// No lost wake-up: a waiter announces itself (room_waiters_ + 1) and then tries for a place
// (reading queued_); a finishing admission gives its place back (queued_ - 1) and then reads
// room_waiters_. All four are seq_cst, so the two pairs are a store-buffering pattern: at least
// one side sees the other — the waiter finds the place, or the giver sees the waiter and takes
// room_mutex_, which the waiter holds from its announcement until it sleeps (or suspends), to
// hand the place over. set_capacity() and the destructor take the mutex themselves.

void detail::place_left(thread_pool* pool) noexcept {
  pool->place_left();
}

bool thread_pool::take_place(bool force) noexcept {
  // seq_cst: the waiter's read in the handshake above (a load that a CAS failure re-does).
  std::int64_t q = queued_.load(std::memory_order_seq_cst);
  for (;;) {
    // relaxed: any recent capacity will do; set_capacity() hands places over under the mutex.
    const std::size_t cap = capacity_.load(std::memory_order_relaxed);
    if (!force && cap != 0 && q >= static_cast<std::int64_t>(cap)) return false;
    if (queued_.compare_exchange_weak(q, q + 1, std::memory_order_seq_cst, std::memory_order_seq_cst))
      return true;
  }
}

bool thread_pool::try_admit_first() noexcept {
  // seq_cst: a stale 0 only lets this submission pass a waiter (try_ calls may always do that).
  return room_waiters_.load(std::memory_order_seq_cst) == 0 && take_place(false);
}

void thread_pool::place_left() noexcept {
  // seq_cst both: the giver's half of the handshake (see "Room").
  queued_.fetch_sub(1, std::memory_order_seq_cst);
  if (room_waiters_.load(std::memory_order_seq_cst) == 0) return;
  detail::room_waiter* resume = nullptr;
  {
    const std::lock_guard lock(room_mutex_);
    resume = hand_places();
  }
  resume_waiters(resume);
}

detail::room_waiter* thread_pool::hand_places() noexcept {
  detail::room_waiter* resume = nullptr;
  detail::room_waiter** resume_tail = &resume;
  while (room_head_ != nullptr && take_place(false)) {
    detail::room_waiter* w = room_head_;
    room_head_ = w->next;
    if (room_head_ == nullptr) room_tail_ = nullptr;
    room_waiters_.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: read by place_left()
    w->st = detail::room_waiter::state::admitted;
    w->next = nullptr;
    if (w->blocked != nullptr) {
      // Under the mutex: the thread cannot return (and free its condition variable) before we
      // unlock.
      w->blocked->notify_one();
    } else {
      *resume_tail = w;
      resume_tail = &w->next;
    }
  }
  return resume;
}

void thread_pool::resume_waiters(detail::room_waiter* list) noexcept {
  while (list != nullptr) {
    // Read before the resumption: the node lives in the coroutine's frame, which may be gone
    // as soon as the coroutine runs.
    detail::room_waiter* next = list->next;
    const std::coroutine_handle<> h = list->coroutine;
    scheduler* on = list->resume_on;
    try {
      on->enqueue(h);
    } catch (...) {
      h.resume();  // out of memory for the queue: run it here rather than lose it
    }
    list = next;
  }
}

bool thread_pool::admit_or_wait() {
  if (own_worker() != nullptr) {
    take_place(true);  // a worker never waits: it must go on starting the tasks that make room
    return false;
  }
  if (try_admit_first()) return false;
  std::unique_lock lock(room_mutex_);
  if (room_closed_) throw pool_closed();
  std::condition_variable blocked;
  detail::room_waiter node;
  node.blocked = &blocked;
  if (enlist(node)) return false;
  blocked.wait(lock, [&] { return node.st != detail::room_waiter::state::waiting; });
  if (node.st == detail::room_waiter::state::closed) {
    leave_room_locked();
    throw pool_closed();
  }
  return true;  // admitted after a wait: the caller calls leave_room() once its task has started
}

bool thread_pool::suspend_for_place(detail::room_waiter& node) {
  const std::lock_guard lock(room_mutex_);
  if (room_closed_ && node.resume_on != this) {  // see close_room(): this pool's own may wait
    node.st = detail::room_waiter::state::closed;
    return false;
  }
  return !enlist(node);  // hand_places() or close_room() resumes it, after this lock is released
}

bool thread_pool::enlist(detail::room_waiter& node) {
  const bool first = room_head_ == nullptr;
  (room_tail_ != nullptr ? room_tail_->next : room_head_) = &node;
  room_tail_ = &node;
  room_waiters_.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: the waiter's announcement
  // With waiters ahead, this one waits its turn; they are handed places as room appears.
  if (first && take_place(false)) {
    room_head_ = room_tail_ = nullptr;
    room_waiters_.fetch_sub(1, std::memory_order_seq_cst);
    node.st = detail::room_waiter::state::admitted;
    return true;
  }
  waited_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
  node.waited = true;
  ++room_pending_;
  return false;
}

void thread_pool::leave_room() {
  const std::lock_guard lock(room_mutex_);
  leave_room_locked();
}

void thread_pool::leave_room_locked() noexcept {
  // Under the mutex: the destructor, waiting in close_room() for the count to reach 0, cannot
  // go on (and destroy the condition variable) before this thread unlocks.
  if (--room_pending_ == 0 && room_closed_) room_closed_cv_.notify_all();
}

void thread_pool::set_capacity(std::size_t max_queued) {
  capacity_.store(max_queued, std::memory_order_relaxed);  // relaxed: the mutex below orders it
  detail::room_waiter* resume = nullptr;
  {
    const std::lock_guard lock(room_mutex_);
    resume = hand_places();
  }
  resume_waiters(resume);
}

void thread_pool::close_room() {
  // The waits from outside end: blocked threads, and coroutines of other pools (or of none).
  // Coroutines of this pool keep their turn: like a task's post during the drain, what they
  // spawn is work the drain runs, and the workers go on making room for them.
  detail::room_waiter* resume = nullptr;
  detail::room_waiter** resume_tail = &resume;
  detail::room_waiter* kept = nullptr;  // this pool's coroutines, in order
  detail::room_waiter* last_kept = nullptr;
  std::size_t kept_count = 0;
  std::unique_lock lock(room_mutex_);
  room_closed_ = true;
  for (detail::room_waiter* w = room_head_; w != nullptr;) {
    detail::room_waiter* next = w->next;
    w->next = nullptr;
    if (w->blocked != nullptr) {
      w->st = detail::room_waiter::state::closed;
      w->blocked->notify_one();  // the thread leaves the count itself, with pool_closed
    } else if (w->resume_on == this) {
      (last_kept != nullptr ? last_kept->next : kept) = w;
      last_kept = w;
      ++kept_count;
    } else {
      w->st = detail::room_waiter::state::closed;
      --room_pending_;  // the coroutine only throws where it resumes: it touches the pool no more
      *resume_tail = w;
      resume_tail = &w->next;
    }
    w = next;
  }
  room_head_ = kept;
  room_tail_ = last_kept;
  room_waiters_.store(kept_count, std::memory_order_seq_cst);
  // Waits for the blocked threads to leave, and for the waiters admitted before this point (and
  // this pool's own, as room appears) to start their tasks: the drain that follows counts them.
  // They run meanwhile: a thread on its own, a coroutine on its pool (this one is still running).
  room_closed_cv_.wait(lock, [this] { return room_pending_ == 0; });
  lock.unlock();
  resume_waiters(resume);  // the closed coroutines throw pool_closed where they are resumed
}

}  // namespace pools::coroutines
