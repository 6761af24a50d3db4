// SPDX-License-Identifier: MIT
// pools/fibers/detail/waiter.hpp — how anything waits: one record per blocked caller.
//
// Every primitive (mutex, condition_variable, latch, channel, future, join) keeps a queue of
// waiters under its spinlock. A waiter is either a suspended fiber or — when the primitive is
// used from a plain thread, e.g. main() waiting for a result — a blocked thread. The protocol
// that makes this race-free:
//
//   waiter: lock; see it must wait; enqueue itself; park(w, lock).
//   waker:  lock; dequeue w; w.try_claim(); unlock; wake(w).
//
// park() releases the lock only once the waiter can no longer miss wake(): for a fiber, after its
// registers are saved (the unlock runs on the next context, see scheduler.cpp suspend_current);
// for a thread, before blocking on a mutex/condvar pair whose flag cannot be lost.
//
// A waiter that also waits for a deadline can be woken twice — by the primitive and by the
// timer. `claimed` picks exactly one: whoever flips it first wakes the waiter; the loser leaves
// it alone. Each side flips it while holding its own lock (primitive or timer queue), so once
// the woken waiter has taken both locks, no one touches it any more and it may be destroyed.
//
// A cancellable wait (channel, future, condition_variable, latch, wait_group, sleep) has a third
// waker: a std::stop_callback on the fiber's stop token (stop_waker), the handshake the coroutines'
// waits use (docs/cancellation.md, "Exactly one resumes"):
//
//   waiter:  watch_stop() registers the callback; lock; stop_requested()? throw, not queued;
//            enqueue; park. After park, the callback is deregistered (waiting for one still
//            running elsewhere) before the waiter reads its result.
//   stop:    lock; waiter queued and claimable? unlink it, set `cancelled`; unlock; wake(w).
//
// Registering before the lock and checking the token under it closes the gap: a stop before the
// check is seen by it (the stop flag is set before any callback runs); a stop after it finds the
// waiter queued. A cancelled waiter was unlinked by the callback, so it never touches the
// primitive again. The callback does touch the primitive (its lock), so a waker first
// deregisters the callbacks of the waiters it took, outside the lock: after that none can be on
// its way to the primitive when someone who saw the wake-up destroys it. That is a woken waiter
// (a latch's last waiter often does) or the waker itself: a channel's sender whose value was
// taken, a notifier, may destroy the primitive the moment it returns, before the woken waiter
// runs. wake_all (close, notify_all, the last count_down, a promise's value) does it for a list;
// wake_one (a channel transfer, notify_one) for one waiter.
//
// A release that a thread can see without being woken — a latch at zero (try_wait, or a wait that
// arrives then), a wait_group at zero, a closed channel — needs one step more: such a thread may
// destroy the primitive as soon as it sees the release, while the releaser is still deregistering
// the callbacks (one may be on its way to the lock). So the release is not visible until that is
// done: release_all() marks it in progress (`releasing`), deregisters outside the lock, and clears
// the mark under the lock as its last touch of the primitive; every other operation takes the lock
// through lock_settled(), which waits out a release in progress.
#pragma once

#include <pools/detail/lock_settled.hpp>
#include <pools/spinlock.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <type_traits>

namespace pools::fibers::detail {

struct fiber_record;
struct waiter;

/// Blocks a plain thread until wake(). Notifies while holding its mutex: the woken thread must
/// take the mutex to see the flag, so it cannot return and destroy the parker before wake()
/// has finished with it.
class thread_parker {
 public:
  void wait() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return woken_; });
  }
  /// True if woken, false on timeout.
  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    return cv_.wait_until(lock, deadline, [this] { return woken_; });
  }
  void wake() {
    std::lock_guard lock(mutex_);
    woken_ = true;
    cv_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool woken_ = false;
};

using timer_map = std::multimap<std::chrono::steady_clock::time_point, waiter*>;

class wait_queue;

/// What a cancellable wait registers on its stop token: under the primitive's lock, takes the
/// waiter out of its queue if it is still there and claimable, sets `cancelled`, and wakes it.
/// parking.cpp.
struct stop_waker {
  waiter* w;
  pools::spinlock* lock;  // the primitive's
  wait_queue* queue;      // the queue the waiter waits in
  void operator()() const noexcept;
};

struct waiter {
  /// Binds to the calling fiber, or prepares a parker when the caller is not a fiber.
  waiter();
  /// The same, for a timed wait (park_until, a sleep) until `deadline`: on a fiber of a real pool
  /// it also makes the entry the timer queue will hold for it (`timer_entry`). That allocates, so
  /// it happens here, before the waiter is queued anywhere: std::bad_alloc reaches the caller with
  /// nothing to undo. Arming the timer later, after the fiber has switched away, cannot throw.
  explicit waiter(std::chrono::steady_clock::time_point deadline);
  waiter(const waiter&) = delete;
  waiter& operator=(const waiter&) = delete;

  /// True for exactly one caller.
  bool try_claim() noexcept { return !claimed.exchange(true, std::memory_order_acq_rel); }

  fiber_record* fiber = nullptr;        // the suspended fiber, or
  std::optional<thread_parker> parker;  // the blocked thread
  waiter* next = nullptr;               // wait_queue links, guarded by the primitive's lock
  waiter* prev = nullptr;
  bool linked = false;
  std::atomic<bool> claimed{false};
  bool timed_out = false;    // set by the timer before it wakes the waiter
  bool timer_armed = false;  // guarded by the timer queue's lock
  timer_map::iterator timer_position{};
  timer_map::node_type timer_entry{};  // made by the timed constructor; moved into the timer queue

  /// A cancellable wait, before taking the primitive's `lock`: watches `token` (from
  /// cancellation_point(); nullptr: nothing to watch) for a stop while the waiter is in `queue`.
  /// The callback may run at once, on this thread: it finds the waiter not queued.
  void watch_stop(const std::stop_token* token, pools::spinlock& lock, wait_queue& queue);
  /// Under the primitive's lock, before queueing: a stop came since watch_stop(). The caller then
  /// gives up (operation_cancelled) without waiting.
  bool stop_requested() const noexcept { return stop_token != nullptr && stop_token->stop_requested(); }

  const std::stop_token* stop_token = nullptr;
  bool cancelled = false;  // set by the stop callback, under the primitive's lock, when it took w
  // Declared last: destroyed first, so a callback never sees a half-destroyed waiter.
  std::optional<std::stop_callback<stop_waker>> on_stop;
};

/// An intrusive FIFO of waiters; every operation requires the owning primitive's lock.
class wait_queue {
 public:
  bool empty() const noexcept { return head_ == nullptr; }

  void push_back(waiter& w) noexcept {
    w.next = nullptr;
    w.prev = tail_;
    if (tail_ != nullptr) {
      tail_->next = &w;
    } else {
      head_ = &w;
    }
    tail_ = &w;
    w.linked = true;
  }

  void erase(waiter& w) noexcept {
    if (!w.linked) return;
    (w.prev != nullptr ? w.prev->next : head_) = w.next;
    (w.next != nullptr ? w.next->prev : tail_) = w.prev;
    w.next = w.prev = nullptr;
    w.linked = false;
  }

  /// Dequeues the first waiter that can still be claimed (skipping ones a timer already took).
  waiter* pop_claimed() noexcept {
    while (waiter* w = head_) {
      erase(*w);
      if (w->try_claim()) return w;
    }
    return nullptr;
  }

  /// Dequeues and claims every waiter; returns them as a list through `next`, to be passed to
  /// wake_all() after the lock is released.
  waiter* take_all_claimed() noexcept {
    waiter* list = nullptr;
    waiter** tail = &list;
    while (waiter* w = head_) {
      erase(*w);
      if (w->try_claim()) {
        *tail = w;
        tail = &w->next;
      }
    }
    return list;
  }

 private:
  waiter* head_ = nullptr;
  waiter* tail_ = nullptr;
};

/// How many simulated fiber pools exist in the process (pools/fibers/simulated.hpp): while there
/// is none, sync_point() costs one relaxed load.
inline std::atomic<int> simulated_pools{0};

/// sync_point()'s work on a simulated pool (src/parking.cpp).
void simulated_sync_point(const char* operation) noexcept;

/// A scheduling point before `operation` ("mutex lock"; pools/sim/scheduler.hpp, SCHEDULING
/// POINTS): every operation of a primitive calls it first, before it takes any lock of its own.
/// On a fiber of a simulated pool the step ends here, and the fiber's next step — whenever the
/// seed picks it — performs the operation; so another fiber may run between an unlock() and the
/// next lock(), whether the lock is contended or not. Anywhere else (a real pool's fiber, a plain
/// thread) it does nothing.
inline void sync_point(const char* operation) noexcept {
  if (simulated_pools.load(std::memory_order_relaxed) != 0) [[unlikely]]
    simulated_sync_point(operation);
}

/// Makes a claimed waiter runnable again: schedules its fiber or unblocks its thread. The waiter
/// may be destroyed as soon as this starts; it is not touched afterwards.
void wake(waiter& w) noexcept;

/// Deregisters the stop callbacks of a list from take_all_claimed(), after the lock is released
/// (a callback may be waiting for it): see the top of this file. wake_all() does it first; a
/// waker of two lists (channel::close) does it for both before it wakes either.
inline void drop_stop_callbacks(waiter* list) noexcept {
  for (waiter* w = list; w != nullptr; w = w->next) w->on_stop.reset();
}

/// wake() for one cancellable waiter taken under the lock (pop_claimed()), after the lock is
/// released: its stop callback goes first, as in wake_all(). The waker may return and destroy the
/// primitive as soon as it has woken the waiter, which may not run for a while: a callback still
/// registered until then would lock the destroyed primitive on a stop. (A waiter that is never
/// cancellable, as in mutex::lock, has no callback: wake() alone is enough there.)
inline void wake_one(waiter& w) noexcept {
  w.on_stop.reset();  // waits for a callback running elsewhere (it finds w taken)
  wake(w);
}

/// wake() for a list from take_all_claimed(), after the lock is released; reads each link before
/// waking its owner. The stop callbacks of all of them go first: none may still be on its way to
/// the primitive's lock once any of them runs again (and perhaps destroys the primitive).
inline void wake_all(waiter* list) noexcept {
  drop_stop_callbacks(list);
  while (list != nullptr) {
    waiter* next = list->next;
    wake(*list);
    list = next;
  }
}

// lock_settled(lock, releasing): takes a primitive's lock for an operation that may see a release
// (see the top of this file), waiting out a release_all() in progress (pools/detail/lock_settled.hpp).
using pools::detail::lock_settled;

/// Ends a release that others may see without being woken: `guard` holds the primitive's lock,
/// under which the release was recorded and `list` taken (take_all_claimed). The callbacks of the
/// list are deregistered before the release becomes visible (`releasing` is cleared), and that
/// clearing, under the lock, is the last touch of the primitive: afterwards only the waiters are
/// woken, each alive until then.
inline void release_all(std::unique_lock<pools::spinlock>& guard, bool& releasing, waiter* list) noexcept {
  if (list != nullptr) {
    releasing = true;  // lock_settled() callers wait from here
    guard.unlock();    // a callback on its way to the lock gets it, finds its waiter taken, ends
    drop_stop_callbacks(list);
    guard.lock();
    releasing = false;
  }
  guard.unlock();  // the release is visible from here: *this may be destroyed
  wake_all(list);
}

/// Blocks until wake(w). `lock` holds the primitive's spinlock, in which `w` is enqueued (and
/// claimable); it is released here and not re-acquired. `what` and `object` name the primitive
/// ("mutex", this): a simulated run's deadlock report says what each stuck fiber waits on
/// (pools/fibers/simulated.hpp); a real pool ignores them. A cancellable wait (watch_stop) may be
/// ended by the stop: w.cancelled is then true and `w` is out of the queue; the callback is
/// deregistered before this returns.
void park(waiter& w, std::unique_lock<pools::spinlock>& lock, const char* what, const void* object);

/// park() with a deadline, for a waiter made with it (waiter(deadline)). Returns true when woken
/// by the primitive (or the stop: w.cancelled), false on timeout; on timeout the caller must
/// re-take its lock and erase `w` from its queue (it may still be linked). Never throws on a real pool: what
/// it allocates was allocated by waiter(deadline).
bool park_until(waiter& w, std::unique_lock<pools::spinlock>& lock,
                std::chrono::steady_clock::time_point deadline, const char* what, const void* object);

/// The time timed waits count from: std::chrono::steady_clock::now(), or — on a fiber of a
/// simulated pool — the simulator's virtual clock mapped onto steady_clock, so that a
/// sleep_for(30s) or a wait_for(30s) takes 30 virtual seconds exactly, in no wall time.
std::chrono::steady_clock::time_point clock_now() noexcept;

/// Converts any clock's time point to a steady_clock deadline (as std::condition_variable does).
template <class Clock, class Duration>
std::chrono::steady_clock::time_point to_steady(const std::chrono::time_point<Clock, Duration>& t) {
  if constexpr (std::is_same_v<Clock, std::chrono::steady_clock>) {
    return std::chrono::time_point_cast<std::chrono::steady_clock::duration>(t);
  } else {
    return clock_now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(t - Clock::now());
  }
}

}  // namespace pools::fibers::detail
