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
//
// Cancellation: on a fiber whose stop token (this_fiber::get_stop_token()) is stopped, send() and
// recv() throw operation_cancelled — at once when it is stopped before they start (nothing is
// sent or taken, even with room or a value there), or when the stop comes while they wait (the
// value is not sent; nothing is taken). The stop and a channel operation may reach a waiter at
// the same moment: both take it out of its queue under the channel's lock, and the one that finds
// it there wins (detail/waiter.hpp), so a value is either handed over or the wait is cancelled,
// never both. try_send, try_recv and close never wait and ignore the token.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/operation_cancelled.hpp>
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
    waiter me;
    me.watch_stop(detail::cancellation_point(), guard_, senders_);  // throws when already stopped
    auto guard = detail::lock_settled(guard_, closing_);
    if (me.stop_requested()) throw operation_cancelled();
    if (closed_) return channel_op_status::closed;
    if (auto* r = static_cast<waiter*>(receivers_.pop_claimed())) {
      r->slot->emplace(std::move(value));
      guard.unlock();
      // wake_one: r's stop callback goes first, as this sender may destroy the channel as soon
      // as it returns, before r runs (detail/waiter.hpp). So for every hand-over below.
      detail::wake_one(*r);
      return channel_op_status::success;
    }
    if (buffer_.size() < capacity_) {
      buffer_.push_back(std::move(value));
      return channel_op_status::success;
    }
    me.value = &value;
    senders_.push_back(me);
    detail::park(me, guard, "channel send", this);
    if (me.cancelled) throw operation_cancelled();  // the value was not sent
    return me.status;                               // written by the receiver or by close() before it woke us
  }

  /// Never waits: `full` (value left untouched) when it would, `closed` when closed.
  channel_op_status try_send(T& value) {
    detail::sync_point("channel try_send");
    auto guard = detail::lock_settled(guard_, closing_);
    if (closed_) return channel_op_status::closed;
    if (auto* r = static_cast<waiter*>(receivers_.pop_claimed())) {
      r->slot->emplace(std::move(value));
      guard.unlock();
      detail::wake_one(*r);
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
    waiter me;
    me.watch_stop(detail::cancellation_point(), guard_, receivers_);  // throws when already stopped
    auto guard = detail::lock_settled(guard_, closing_);
    if (me.stop_requested()) throw operation_cancelled();
    std::optional<T> v;
    if (take_locked(v, guard)) return v;
    if (closed_) return std::nullopt;
    me.slot = &v;
    receivers_.push_back(me);
    detail::park(me, guard, "channel recv", this);
    if (me.cancelled) throw operation_cancelled();  // nothing was taken
    return v;                                       // filled by a sender, or left empty by close()
  }

  /// Never waits: `empty` when it would, `closed` when closed and drained.
  channel_op_status try_recv(T& out) {
    detail::sync_point("channel try_recv");
    auto guard = detail::lock_settled(guard_, closing_);
    std::optional<T> v;
    if (take_locked(v, guard)) {
      out = std::move(*v);
      return channel_op_status::success;
    }
    return closed_ ? channel_op_status::closed : channel_op_status::empty;
  }

  /// Idempotent. Waiting senders fail with `closed`; waiting receivers get nullopt; buffered
  /// values can still be received. "Closed" is visible to the other operations only once close()
  /// is done with the channel: a thread that sees it may destroy the channel at once.
  void close() noexcept {
    detail::sync_point("channel close");
    auto guard = detail::lock_settled(guard_, closing_);
    if (closed_) return;
    closed_ = true;
    detail::waiter* s = senders_.take_all_claimed();
    detail::waiter* r = receivers_.take_all_claimed();
    detail::waiter** tail = &s;  // one list, senders first: their callbacks and the receivers'
    for (; *tail != nullptr; tail = &(*tail)->next)  // all go before anyone runs, or sees "closed"
      static_cast<waiter*>(*tail)->status = channel_op_status::closed;
    *tail = r;
    detail::release_all(guard, closing_, s);
  }

  bool is_closed() const noexcept {
    detail::sync_point("channel is_closed");
    const auto guard = detail::lock_settled(guard_, closing_);
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
        detail::wake_one(*s);
      }
      return true;
    }
    if (auto* s = static_cast<waiter*>(senders_.pop_claimed())) {
      v.emplace(std::move(*s->value));
      s->status = channel_op_status::success;
      guard.unlock();
      detail::wake_one(*s);
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
  bool closing_ = false;  // close() is not done with the channel yet (detail::release_all)
};

}  // namespace pools::fibers
