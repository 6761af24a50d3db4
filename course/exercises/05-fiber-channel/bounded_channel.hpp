// SPDX-License-Identifier: MIT
// bounded_channel.hpp — exercise 05-fiber-channel: a bounded channel that fibers can wait on.
// docs/course/05-fiber-channel.md has the story; scripts/grade-exercise.sh 05-fiber-channel grades it.
//
// A channel with room for `capacity` values: send() waits while it is full, recv() waits while it
// is empty, close() ends it (waiting senders fail, receivers drain what is left, then get nullopt).
// Values come out in the order they went in.
//
// As given, it is the textbook channel for THREADS: a std::mutex and two std::condition_variables.
// It is correct between threads (the check's first part passes), and wrong between FIBERS: a fiber
// that waits on a std::condition_variable blocks the worker thread it runs on, not just itself.
// That worker then runs nothing else: not the other fibers queued on it, and in particular not the
// fiber that would send the value it waits for. On a pool of one thread, the first fiber that waits
// stops the whole pool for good; on two, two waiting fibers do. Run the grader to see it happen.
//
// TODO(student): make waiting suspend only the calling fiber, so that its worker goes on with the
// other fibers, while threads that call send()/recv() still simply block. Use the fibers variant's
// primitives (variants/fibers/include/pools/fibers/): pools::fibers::mutex, whose lock() parks the
// fiber, and pools::fibers::condition_variable, whose wait() queues the fiber and then releases
// the mutex so that no notify is lost in between. Both also work from plain threads (they block).
// Keep the interface: the check uses exactly these members. Do not wrap pools::fibers::channel:
// the point is to build one.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace exercise {

template <class T>
class bounded_channel {
 public:
  /// Room for `capacity` values (at least 1).
  explicit bounded_channel(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  bounded_channel(const bounded_channel&) = delete;
  bounded_channel& operator=(const bounded_channel&) = delete;

  /// Waits while the channel is full. False (and the value is dropped) when it is or becomes
  /// closed before there is room.
  bool send(T value) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [this] { return closed_ || buffer_.size() < capacity_; });
    if (closed_) return false;
    buffer_.push_back(std::move(value));
    lock.unlock();
    not_empty_.notify_one();
    return true;
  }

  /// Waits while the channel is empty and open. The oldest value; nullopt once the channel is
  /// closed and every value sent before close() has been received.
  std::optional<T> recv() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [this] { return closed_ || !buffer_.empty(); });
    if (buffer_.empty()) return std::nullopt;  // closed and drained
    std::optional<T> value(std::move(buffer_.front()));
    buffer_.pop_front();
    lock.unlock();
    not_full_.notify_one();
    return value;
  }

  /// Idempotent. Wakes every waiter: waiting senders return false, receivers drain, then nullopt.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  std::size_t capacity() const noexcept { return capacity_; }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;                   // TODO(student): a fiber that waits here blocks its worker
  std::condition_variable not_full_;   // TODO(student): ditto
  std::condition_variable not_empty_;  // TODO(student): ditto
  std::deque<T> buffer_;               // guarded by mutex_, as is closed_
  bool closed_ = false;
};

}  // namespace exercise
