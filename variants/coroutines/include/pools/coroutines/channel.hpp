// SPDX-License-Identifier: MIT
// pools/coroutines/channel.hpp — a bounded multi-producer multi-consumer channel for coroutines.
//
//   channel<int> ch(16);
//   bool sent = co_await ch.send(42);              // suspends while full; false once closed
//   std::optional<int> v = co_await ch.receive();  // suspends while empty; nullopt once closed and drained
//   ch.close();                                    // from anywhere: wakes every waiter
//
// Semantics (Go's, except that sending on a closed channel returns false instead of panicking):
// values are delivered in FIFO order; after close() no send succeeds, receivers first drain what
// is buffered and then get nullopt. A receiver waiting on an empty channel gets a value handed
// directly by the next sender; a sender waiting on a full channel has its value moved into the
// buffer by the receiver that makes room.
//
// A std::mutex guards the buffer and the two waiter lists. Channels are for pipelines between
// coroutines, not the fork/join hot path, and a lock makes the hand-offs above easy to check.
// Waiters are resumed after the lock is released, on their own pool (detail/resumer.hpp).
//
// Cancellation: in a task under a stop token (stop_token.hpp) a send or receive throws
// operation_cancelled when the token is stopped before the operation completes — already stopped
// when it starts (nothing is sent or taken), or stopped while it waits. A waiting operation may
// then be completed by two parties: a channel operation on another thread (which pops the waiter
// from its list) and the stop callback (which unlinks it). The channel's mutex decides: whoever
// removes the waiter from its list under the lock resumes it, and the other finds it gone. The
// callback is registered before the waiter is queued, and the queueing checks the token under
// the same lock, so a stop is never missed (sleep.hpp draws the same handshake).
#pragma once

#include <pools/coroutines/detail/resumer.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/detail/lock_settled.hpp>

#include <coroutine>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <utility>

namespace pools::coroutines {

template <class T>
class channel {
 public:
  /// Throws std::invalid_argument for a capacity of 0 (an unbuffered rendezvous is not offered).
  explicit channel(std::size_t capacity) : capacity_(capacity) {
    if (capacity == 0) throw std::invalid_argument("pools::coroutines::channel: capacity must be at least 1");
  }
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  class send_awaiter {
   public:
    send_awaiter(channel& ch, T value) : ch_(ch), value_(std::move(value)) {}
    send_awaiter(const send_awaiter&) = delete;  // a stop callback may point at it
    send_awaiter& operator=(const send_awaiter&) = delete;
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> h) {
      // On the simulator, a scheduling point first (detail/resumer.hpp): the send happens in the
      // coroutine's next step.
      if (detail::defer(h, "channel send", [this, h] { return attempt(h); })) return true;
      return attempt(h);
    }
    /// True when the value was delivered or buffered; false when the channel was closed. Throws
    /// operation_cancelled when the task's stop token was stopped first (nothing was sent).
    bool await_resume() {
      stop_.reset();  // waits for a callback still running on another thread
      if (cancelled_) throw operation_cancelled();
      return sent_;
    }

   private:
    friend class channel;
    // await_suspend's work: buffers the value or hands it to a waiting receiver (false: go on), or
    // queues this sender on a full channel (true: suspended).
    template <class Promise>
    bool attempt(std::coroutine_handle<Promise> h) {
      resumer_.capture(h, "channel send", &ch_);
      const std::stop_token* token = detail::stop_token_of(h);
      if (token != nullptr && token->stop_possible())
        stop_ = std::make_unique<std::stop_callback<on_stop>>(*token, on_stop{this});
      receive_awaiter* receiver = nullptr;
      {
        const auto lock = ch_.lock_settled();
        if (token != nullptr && token->stop_requested()) {
          cancelled_ = true;
          return resumer_.not_suspended();
        }
        if (ch_.closed_) {
          sent_ = false;
          return resumer_.not_suspended();
        }
        if (ch_.receivers_.head != nullptr) {  // the buffer is empty: hand the value over directly
          receiver = ch_.receivers_.pop();
          receiver->value_.emplace(std::move(value_));
        } else if (ch_.buffer_.size() < ch_.capacity_) {
          ch_.buffer_.push_back(std::move(value_));
        } else {
          ch_.senders_.push(this);  // full: wait for a receiver to make room
          return true;
        }
      }
      sent_ = true;
      if (receiver != nullptr) {
        receiver->stop_.reset();  // its on_stop may be on its way to ch_'s mutex: wait it out (close())
        receiver->resumer_.resume();
      }
      return resumer_.not_suspended();
    }
    struct on_stop {
      send_awaiter* self;
      void operator()() const noexcept {
        {
          std::lock_guard lock(self->ch_.mutex_);
          if (!self->ch_.senders_.remove(self)) return;  // not queued yet, or already completed
          self->cancelled_ = true;
        }
        self->resumer_.resume();  // after this, *self may be gone
      }
    };
    channel& ch_;
    T value_;
    bool sent_ = false;
    bool cancelled_ = false;
    send_awaiter* next_ = nullptr;
    detail::resumer resumer_;
    // On the heap: a std::stop_callback is ~7 words, and only a wait under a stoppable token has
    // one; every other waiting frame pays one pointer.
    std::unique_ptr<std::stop_callback<on_stop>> stop_;
  };

  class receive_awaiter {
   public:
    explicit receive_awaiter(channel& ch) noexcept : ch_(ch) {}
    receive_awaiter(const receive_awaiter&) = delete;  // a stop callback may point at it
    receive_awaiter& operator=(const receive_awaiter&) = delete;
    bool await_ready() const noexcept { return false; }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> h) {
      // On the simulator, a scheduling point first (detail/resumer.hpp): the receive happens in the
      // coroutine's next step.
      if (detail::defer(h, "channel receive", [this, h] { return attempt(h); })) return true;
      return attempt(h);
    }
    /// The next value, or nullopt when the channel is closed and empty. Throws
    /// operation_cancelled when the task's stop token was stopped first (nothing was taken).
    std::optional<T> await_resume() {
      stop_.reset();  // waits for a callback still running on another thread
      if (cancelled_) throw operation_cancelled();
      return std::move(value_);
    }

   private:
    friend class channel;
    // await_suspend's work: takes a value (false: go on), or queues this receiver on an empty
    // channel (true: suspended).
    template <class Promise>
    bool attempt(std::coroutine_handle<Promise> h) {
      resumer_.capture(h, "channel receive", &ch_);
      const std::stop_token* token = detail::stop_token_of(h);
      if (token != nullptr && token->stop_possible())
        stop_ = std::make_unique<std::stop_callback<on_stop>>(*token, on_stop{this});
      send_awaiter* sender = nullptr;
      {
        const auto lock = ch_.lock_settled();
        if (token != nullptr && token->stop_requested()) {
          cancelled_ = true;
          return resumer_.not_suspended();
        }
        if (!ch_.buffer_.empty()) {
          value_.emplace(std::move(ch_.buffer_.front()));
          ch_.buffer_.pop_front();
          if (ch_.senders_.head != nullptr) {  // room now: the oldest waiting sender's value moves in
            sender = ch_.senders_.pop();
            ch_.buffer_.push_back(std::move(sender->value_));
            sender->sent_ = true;
          }
        } else if (!ch_.closed_) {
          ch_.receivers_.push(this);  // empty: wait for a sender (or close)
          return true;
        }  // else closed and drained: value_ stays empty
      }
      if (sender != nullptr) {
        sender->stop_.reset();  // as for a receiver in send (close() says why)
        sender->resumer_.resume();
      }
      return resumer_.not_suspended();
    }
    struct on_stop {
      receive_awaiter* self;
      void operator()() const noexcept {
        {
          std::lock_guard lock(self->ch_.mutex_);
          if (!self->ch_.receivers_.remove(self)) return;  // not queued yet, or already completed
          self->cancelled_ = true;
        }
        self->resumer_.resume();  // after this, *self may be gone
      }
    };
    channel& ch_;
    std::optional<T> value_;
    bool cancelled_ = false;
    receive_awaiter* next_ = nullptr;
    detail::resumer resumer_;
    // On the heap: a std::stop_callback is ~7 words, and only a wait under a stoppable token has
    // one; every other waiting frame pays one pointer.
    std::unique_ptr<std::stop_callback<on_stop>> stop_;
  };

  send_awaiter send(T value) { return send_awaiter(*this, std::move(value)); }
  receive_awaiter receive() noexcept { return receive_awaiter(*this); }

  /// Closes the channel: waiting senders get false, waiting receivers nullopt (waiting receivers
  /// exist only while the buffer is empty). Values already buffered can still be received.
  void close() {
    waiter_list<send_awaiter> senders;
    waiter_list<receive_awaiter> receivers;
    bool took_waiters = false;
    {
      const auto lock = lock_settled();
      if (closed_) return;
      closed_ = true;
      senders = std::exchange(senders_, {});
      receivers = std::exchange(receivers_, {});
      took_waiters = senders.head != nullptr || receivers.head != nullptr;
      closing_ = took_waiters;  // "closed" is not visible to the others yet (lock_settled)
    }
    // The taken waiters' stop callbacks go first, outside the lock: destroying one waits for an
    // on_stop running elsewhere (it finds its waiter gone), so none is still on its way to this
    // channel's mutex once anyone may destroy it: a resumed waiter, or any thread that sees the
    // channel closed (is_closed(), a send that fails). Until then `closing_` hides "closed".
    for (auto* w = senders.head; w != nullptr; w = w->next_) w->stop_.reset();
    for (auto* w = receivers.head; w != nullptr; w = w->next_) w->stop_.reset();
    if (took_waiters) {
      std::lock_guard lock(mutex_);
      closing_ = false;  // "closed" is visible from here: the last touch of *this
    }
    // From here on only the taken waiters are touched; each is alive until it is resumed.
    while (senders.head != nullptr) senders.pop()->resumer_.resume();      // sent_ is false
    while (receivers.head != nullptr) receivers.pop()->resumer_.resume();  // value_ is empty
  }

  bool is_closed() const {
    const auto lock = lock_settled();
    return closed_;
  }
  std::size_t size() const {
    const auto lock = lock_settled();
    return buffer_.size();
  }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  // An intrusive FIFO of awaiters, which live in the suspended coroutines' frames.
  template <class W>
  struct waiter_list {
    W* head = nullptr;
    W* tail = nullptr;
    void push(W* w) noexcept {
      w->next_ = nullptr;
      if (tail != nullptr) {
        tail->next_ = w;
      } else {
        head = w;
      }
      tail = w;
    }
    W* pop() noexcept {
      W* w = head;
      head = w->next_;
      if (head == nullptr) tail = nullptr;
      return w;
    }
    /// Unlinks `w` if it is in the list (a cancelled waiter); false if it is not.
    bool remove(W* w) noexcept {
      W* prev = nullptr;
      for (W* p = head; p != nullptr; prev = p, p = p->next_) {
        if (p != w) continue;
        (prev != nullptr ? prev->next_ : head) = p->next_;
        if (tail == p) tail = prev;
        return true;
      }
      return false;
    }
  };

  // Locks mutex_ for an operation that may see "closed": waits out a close() that is still
  // deregistering its waiters' stop callbacks (close() says why). The stop callbacks themselves
  // lock mutex_ directly: close() waits for them.
  std::unique_lock<std::mutex> lock_settled() const { return pools::detail::lock_settled(mutex_, closing_); }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<T> buffer_;
  waiter_list<send_awaiter> senders_;
  waiter_list<receive_awaiter> receivers_;
  bool closed_ = false;
  bool closing_ = false;  // close() has set closed_ but is not done with *this yet
};

}  // namespace pools::coroutines
