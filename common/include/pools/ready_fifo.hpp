// SPDX-License-Identifier: MIT
// pools/ready_fifo.hpp — a worker's private FIFO of work woken by its event loop.
//
//   pools::ready_fifo<void*> io_ready;   // a member of the worker, touched by its thread only
//   io_ready.push(h);                    // a completion the park hook ran resumes h
//   void* next; if (io_ready.pop(next)) run(next);
//
// Why not the worker's deque: a work-stealing deque is LIFO for its owner. Completions from one
// poll of the event loop pushed on top of it run newest first, and the next poll (every few dozen
// tasks, for fairness) pushes newer ones on top again — the oldest wake-ups at the bottom can wait
// poll after poll. With 64 keep-alive connections on one worker that was a /plaintext p99 of up to
// 3 ms instead of 0.3 ms (server/README.md). Both the fibers and the coroutines scheduler keep
// these wake-ups in a ready_fifo beside the deque: fibers take turns between the two, coroutines
// take the FIFO first (their README's "Parking in an event loop" has the /sleep numbers).
//
// Owner-only, not stealable: a woken connection's socket belongs to this worker's event loop
// anyway, and the owner is awake (it is running the hook), so pushing needs no wake-up.
// Not thread-safe, no atomics: push and pop from the owning thread only.
#pragma once

#include <cstddef>
#include <vector>

namespace pools {

template <class T>
class ready_fifo {
 public:
  void push(T item) { items_.push_back(item); }

  /// The oldest item, if any.
  bool pop(T& out) noexcept {
    if (head_ == items_.size()) return false;
    out = items_[head_++];
    if (head_ == items_.size()) {
      items_.clear();  // keeps the capacity: no allocation in the steady state
      head_ = 0;
    }
    return true;
  }

  bool empty() const noexcept { return head_ == items_.size(); }
  std::size_t size() const noexcept { return items_.size() - head_; }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
};

}  // namespace pools
