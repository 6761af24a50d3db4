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
#pragma once

#include <pools/spinlock.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
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

/// wake() for a list from take_all_claimed(); reads each link before waking its owner.
inline void wake_all(waiter* list) noexcept {
  while (list != nullptr) {
    waiter* next = list->next;
    wake(*list);
    list = next;
  }
}

/// Blocks until wake(w). `lock` holds the primitive's spinlock, in which `w` is enqueued (and
/// claimable); it is released here and not re-acquired. `what` and `object` name the primitive
/// ("mutex", this): a simulated run's deadlock report says what each stuck fiber waits on
/// (pools/fibers/simulated.hpp); a real pool ignores them.
void park(waiter& w, std::unique_lock<pools::spinlock>& lock, const char* what, const void* object);

/// park() with a deadline, for a waiter made with it (waiter(deadline)). Returns true when woken
/// by the primitive, false on timeout; on timeout the caller must re-take its lock and erase `w`
/// from its queue (it may still be linked). Never throws on a real pool: what it allocates was
/// allocated by waiter(deadline).
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
