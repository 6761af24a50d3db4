// SPDX-License-Identifier: MIT
// bounded_channel.hpp — exercise 05-fiber-channel, A CHEAT (course/cheats/: instructor-only, left
// out of the hand-out). ctest -R exercise_05-fiber-channel_cheat_ proves the check fails it.
//
// THE CHEAT: no wait at all. A fiber that finds the channel full or empty lets go of the lock,
// yields (pools::fibers::this_fiber::yield: other fibers of its worker run) and looks again. The
// old check passed it, since the producers do get to run; but the waiting fiber is never parked
// and its worker never goes idle: it burns a core while nothing happens.
#pragma once

#include <pools/fibers/this_fiber.hpp>

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
    while (!(closed_ || buffer_.size() < capacity_)) {
      lock.unlock();
      pools::fibers::this_fiber::yield();
      lock.lock();
    }
    if (closed_) return false;
    buffer_.push_back(std::move(value));
    return true;
  }

  /// Waits while the channel is empty and open. The oldest value; nullopt once the channel is
  /// closed and every value sent before close() has been received.
  std::optional<T> recv() {
    std::unique_lock lock(mutex_);
    while (!(closed_ || !buffer_.empty())) {
      lock.unlock();
      pools::fibers::this_fiber::yield();
      lock.lock();
    }
    if (buffer_.empty()) return std::nullopt;  // closed and drained
    std::optional<T> value(std::move(buffer_.front()));
    buffer_.pop_front();
    return value;
  }

  /// Idempotent. Wakes every waiter: waiting senders return false, receivers drain, then nullopt.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }

  std::size_t capacity() const noexcept { return capacity_; }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;      // held only across code that never waits
  std::deque<T> buffer_;  // guarded by mutex_, as is closed_
  bool closed_ = false;
};

}  // namespace exercise
