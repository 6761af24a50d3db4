// SPDX-License-Identifier: MIT
// bounded_channel.hpp — exercise 05-fiber-channel, REFERENCE SOLUTION (course/solutions/: an
// instructor deletes this folder before handing the exercise out).
//
// The std:: mutex and condition variables became the fibers variant's: the code is the same
// monitor, line for line, but a wait now parks the calling fiber (its worker picks up the next
// ready fiber) instead of blocking the thread, and a plain thread that waits still blocks. Why
// this is enough, and not a lost wake-up: pools::fibers::condition_variable::wait() queues the
// fiber under its own lock *before* it releases the channel's mutex, so a notify that comes
// between the unlock and the suspension finds the fiber already queued.
#pragma once

#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/mutex.hpp>

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
  pools::fibers::mutex mutex_;  // lock() parks a fiber; the critical sections never wait inside
  pools::fibers::condition_variable not_full_;
  pools::fibers::condition_variable not_empty_;
  std::deque<T> buffer_;  // guarded by mutex_, as is closed_
  bool closed_ = false;
};

}  // namespace exercise
