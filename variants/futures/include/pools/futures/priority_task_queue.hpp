// SPDX-License-Identifier: MIT
// pools/futures/priority_task_queue.hpp — the queue of priority_thread_pool: a binary heap under
// one (spin) lock.
//
// Same interface as the FIFO, pools::two_lock_queue<task_function> (pools/two_lock_queue.hpp), so
// the pool is written once. A heap has a single "front", so it cannot be split into a producer end
// and a consumer end: producers and workers share the one lock. That is the price of priorities, paid only by
// the pool type that asks for them. Ties are broken by a sequence number, so equal priorities run in
// submission order (a plain std::priority_queue, as BS::thread_pool uses, does not promise that).
#pragma once

#include <pools/futures/priority.hpp>
#include <pools/spinlock.hpp>
#include <pools/unique_function.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>  // std::lock_guard
#include <utility>
#include <vector>

namespace pools::futures {

class priority_task_queue {
 public:
  priority_task_queue() = default;
  priority_task_queue(const priority_task_queue&) = delete;
  priority_task_queue& operator=(const priority_task_queue&) = delete;

  /// Inserts a task; like two_lock_queue::push, publishes the new size with a seq_cst store.
  void push(priority_t priority, task_function&& task) {
    const std::lock_guard lock(mutex_);
    heap_.push_back(entry{priority, next_sequence_++, std::move(task)});
    std::push_heap(heap_.begin(), heap_.end(), runs_later);
    size_.store(heap_.size(), std::memory_order_seq_cst);
  }

  /// Moves the highest-priority (then oldest) task into `out`; see two_lock_queue::try_pop.
  template <class Admit>
  bool try_pop(task_function& out, Admit&& admit) {
    if (!maybe_nonempty_relaxed()) return false;
    const std::lock_guard lock(mutex_);
    if (heap_.empty() || !admit()) return false;
    std::pop_heap(heap_.begin(), heap_.end(), runs_later);
    out = std::move(heap_.back().task);
    heap_.pop_back();
    size_.store(heap_.size(), std::memory_order_release);
    return true;
  }

  std::size_t size() const noexcept { return size_.load(std::memory_order_acquire); }
  bool maybe_nonempty() const noexcept { return size_.load(std::memory_order_seq_cst) != 0; }
  bool maybe_nonempty_relaxed() const noexcept { return size_.load(std::memory_order_relaxed) != 0; }

  template <class F>
  decltype(auto) with_consumer_lock(F&& f) {
    std::lock_guard lock(mutex_);
    return std::forward<F>(f)();
  }

  /// Removes every queued task, highest priority first.
  std::vector<task_function> take_all() {
    std::vector<task_function> taken;
    std::lock_guard lock(mutex_);
    taken.reserve(heap_.size());
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), runs_later);
      taken.push_back(std::move(heap_.back().task));
      heap_.pop_back();
    }
    size_.store(0, std::memory_order_release);
    return taken;
  }

 private:
  struct entry {
    priority_t priority;
    std::uint64_t sequence;
    task_function task;
  };
  // std::push_heap builds a max-heap: the "largest" entry is the one to run next.
  static bool runs_later(const entry& a, const entry& b) noexcept {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.sequence > b.sequence;
  }

  pools::spinlock mutex_;
  std::vector<entry> heap_;
  std::uint64_t next_sequence_ = 0;
  std::atomic<std::size_t> size_{0};
};

}  // namespace pools::futures
