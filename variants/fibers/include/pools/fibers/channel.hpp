// SPDX-License-Identifier: MIT
// pools/fibers/channel.hpp — Go-style channels between fibers (and threads).
//
//   channel<int> ch;        // unbuffered: send() waits until a receiver takes the value
//   channel<int> jobs(64);  // buffered: send() waits only while 64 values are queued
//   ch.send(42);            // channel_op_status::success, or ::closed
//   std::optional<int> v = ch.recv();   // nullopt once closed and drained
//   ch.close();             // wakes every waiter; later sends fail, receives drain the buffer
//
// Hand-over is direct: a sender that finds a waiting receiver moves its value straight into the
// receiver's slot and wakes it; a receiver that finds a waiting sender takes the sender's value
// (for a buffered channel: the oldest buffered value, and the sender's value joins the buffer
// at the back, so order is kept). One lock guards the buffer and both waiter queues.
//
// T must be nothrow-move-constructible: a value moved under the lock must not be able to throw
// half-way through a hand-over.
#pragma once

#include <pools/fibers/detail/waiter.hpp>
#include <pools/spinlock.hpp>

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace pools::fibers {

enum class channel_op_status { success, empty, full, closed };

template <class T>
class channel {
  static_assert(std::is_nothrow_move_constructible_v<T>, "channel<T> needs a nothrow move constructor");

 public:
  /// capacity 0: unbuffered (rendezvous).
  explicit channel(std::size_t capacity = 0) : capacity_(capacity) {}
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;
  ~channel() = default;  // destroying a channel with waiters is undefined, as for a mutex

  /// Waits until the value is taken (unbuffered), or buffered. `closed` if the channel is or
  /// becomes closed first (the value is then dropped).
  channel_op_status send(T value) {
    detail::sync_point("channel send");
    std::unique_lock guard(guard_);
    if (closed_) return channel_op_status::closed;
    if (auto* r = static_cast<waiter*>(receivers_.pop_claimed())) {
      r->slot->emplace(std::move(value));
      guard.unlock();
      detail::wake(*r);
      return channel_op_status::success;
    }
    if (buffer_.size() < capacity_) {
      buffer_.push_back(std::move(value));
      return channel_op_status::success;
    }
    waiter me;
    me.value = &value;
    senders_.push_back(me);
    detail::park(me, guard, "channel send", this);
    return me.status;  // written by the receiver or by close() before it woke us
  }

  /// Never waits: `full` (value left untouched) when it would, `closed` when closed.
  channel_op_status try_send(T& value) {
    detail::sync_point("channel try_send");
    std::unique_lock guard(guard_);
    if (closed_) return channel_op_status::closed;
    if (auto* r = static_cast<waiter*>(receivers_.pop_claimed())) {
      r->slot->emplace(std::move(value));
      guard.unlock();
      detail::wake(*r);
      return channel_op_status::success;
    }
    if (buffer_.size() < capacity_) {
      buffer_.push_back(std::move(value));
      return channel_op_status::success;
    }
    return channel_op_status::full;
  }

  /// Waits for a value; nullopt when the channel is closed and no value is left.
  std::optional<T> recv() {
    detail::sync_point("channel recv");
    std::unique_lock guard(guard_);
    std::optional<T> v;
    if (take_locked(v, guard)) return v;
    if (closed_) return std::nullopt;
    waiter me;
    me.slot = &v;
    receivers_.push_back(me);
    detail::park(me, guard, "channel recv", this);
    return v;  // filled by a sender, or left empty by close()
  }

  /// Never waits: `empty` when it would, `closed` when closed and drained.
  channel_op_status try_recv(T& out) {
    detail::sync_point("channel try_recv");
    std::unique_lock guard(guard_);
    std::optional<T> v;
    if (take_locked(v, guard)) {
      out = std::move(*v);
      return channel_op_status::success;
    }
    return closed_ ? channel_op_status::closed : channel_op_status::empty;
  }

  /// Idempotent. Waiting senders fail with `closed`; waiting receivers get nullopt; buffered
  /// values can still be received.
  void close() noexcept {
    detail::sync_point("channel close");
    std::unique_lock guard(guard_);
    if (closed_) return;
    closed_ = true;
    detail::waiter* s = senders_.take_all_claimed();
    detail::waiter* r = receivers_.take_all_claimed();
    for (detail::waiter* w = s; w != nullptr; w = w->next)
      static_cast<waiter*>(w)->status = channel_op_status::closed;
    guard.unlock();
    detail::wake_all(s);
    detail::wake_all(r);
  }

  bool is_closed() const noexcept {
    detail::sync_point("channel is_closed");
    std::lock_guard guard(guard_);
    return closed_;
  }

  std::size_t capacity() const noexcept { return capacity_; }

 private:
  struct waiter : detail::waiter {
    T* value = nullptr;                // a sender's value, moved out by the receiver
    std::optional<T>* slot = nullptr;  // a receiver's slot, filled by the sender
    channel_op_status status = channel_op_status::success;
  };

  // Takes the next value if there is one; releases the lock (and wakes a sender) when it does.
  bool take_locked(std::optional<T>& v, std::unique_lock<pools::spinlock>& guard) {
    if (!buffer_.empty()) {
      v.emplace(std::move(buffer_.front()));
      buffer_.pop_front();
      if (auto* s = static_cast<waiter*>(senders_.pop_claimed())) {
        buffer_.push_back(std::move(*s->value));  // the oldest blocked sender takes the free slot
        s->status = channel_op_status::success;
        guard.unlock();
        detail::wake(*s);
      }
      return true;
    }
    if (auto* s = static_cast<waiter*>(senders_.pop_claimed())) {
      v.emplace(std::move(*s->value));
      s->status = channel_op_status::success;
      guard.unlock();
      detail::wake(*s);
      return true;
    }
    return false;
  }

  mutable pools::spinlock guard_;
  const std::size_t capacity_;
  std::deque<T> buffer_;  // guarded by guard_, as is everything below
  detail::wait_queue senders_;
  detail::wait_queue receivers_;
  bool closed_ = false;
};

}  // namespace pools::fibers
