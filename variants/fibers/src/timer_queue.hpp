// SPDX-License-Identifier: MIT
// src/timer_queue.hpp — sleeping fibers and timed waits, ordered by deadline.
//
// No timer thread: the workers are the timer. A worker checks `due()` (one relaxed load while no
// timer is armed) whenever it looks for work, and an idle worker parks with the earliest deadline
// as its timeout. A sleeping fiber therefore costs a map node, not a blocked thread.
#pragma once

#include <pools/fibers/detail/waiter.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>

namespace pools::fibers::detail {

class timer_queue {
 public:
  using clock = std::chrono::steady_clock;

  using node = timer_map::node_type;

  /// The timer's entry for `w`, made by the fiber before it suspends (waiter(deadline), before the
  /// waiter is queued anywhere), where std::bad_alloc can still reach its caller: add() runs in a
  /// post-switch action (noexcept), and inserting a node that exists allocates nothing.
  static node make_node(waiter& w, clock::time_point deadline) {
    timer_map one;
    one.emplace(deadline, &w);
    return one.extract(one.begin());
  }

  /// Arms the timer of `n` (make_node) for `w` (a fiber waiter). Returns true when it became the
  /// earliest deadline, so that a worker parked with a later timeout must be woken to re-arm its
  /// sleep.
  bool add(waiter& w, node&& n) noexcept {
    std::lock_guard lock(mutex_);
    const clock::time_point deadline = n.key();
    w.timer_position = entries_.insert(std::move(n));
    w.timer_armed = true;
    const auto ns = to_ns(deadline);
    if (ns < earliest_.load(std::memory_order_relaxed)) {
      // seq_cst: the publishing half of the handshake with parking workers (the caller then
      // reads the sleeper count, scheduler::notify_one_if_sleeping).
      earliest_.store(ns, std::memory_order_seq_cst);
      return true;
    }
    return false;
  }

  /// Disarms `w`'s timer if it has not fired. After this returns the timer queue no longer
  /// refers to `w` (fire() claims and wakes under the same lock).
  void cancel(waiter& w) noexcept {
    std::lock_guard lock(mutex_);
    if (!w.timer_armed) return;
    entries_.erase(w.timer_position);
    w.timer_armed = false;
    refresh_earliest();
  }

  /// Cheap check from the scheduling loop: one load (seq_cst: also a re-read of work_visible()).
  bool due() const noexcept {
    const auto e = earliest_.load(std::memory_order_seq_cst);
    return e != none && e <= to_ns(clock::now());
  }

  bool empty() const noexcept { return earliest_.load(std::memory_order_relaxed) == none; }

  clock::time_point earliest() const noexcept {
    const auto e = earliest_.load(std::memory_order_seq_cst);
    return e == none ? clock::time_point::max() : clock::time_point(std::chrono::nanoseconds(e));
  }

  /// Wakes every waiter whose deadline has passed and that no one else claimed first.
  void fire() noexcept {
    std::lock_guard lock(mutex_);
    const auto now = clock::now();
    while (!entries_.empty() && entries_.begin()->first <= now) {
      waiter* w = entries_.begin()->second;
      entries_.erase(entries_.begin());
      w->timer_armed = false;
      if (w->try_claim()) {
        w->timed_out = true;
        wake(*w);
      }
    }
    refresh_earliest();
  }

 private:
  static constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  static std::int64_t to_ns(clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  void refresh_earliest() noexcept {
    earliest_.store(entries_.empty() ? none : to_ns(entries_.begin()->first), std::memory_order_relaxed);
  }

  std::mutex mutex_;
  timer_map entries_;
  std::atomic<std::int64_t> earliest_{none};
};

}  // namespace pools::fibers::detail
