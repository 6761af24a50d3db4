// SPDX-License-Identifier: MIT
// pools/fibers/future.hpp — a one-shot value between fibers: promise<T> writes, future<T> reads.
//
// The shape of std::promise/std::future, and the same errors (std::future_error with
// broken_promise, promise_already_satisfied, future_already_retrieved, no_state), but get() and
// wait() suspend the calling fiber instead of blocking its worker. Usable across pools and from
// plain threads. The shared state is reference-counted (std::shared_ptr): either side may go
// first. A promise destroyed without a value stores broken_promise, so no reader waits forever.
//
// get(), wait(), wait_for() and wait_until() are cancellable: on a fiber whose stop token
// (this_fiber::get_stop_token()) is stopped before the result is ready, they throw
// operation_cancelled and the future stays valid (get() can be called again). A ready result is
// returned whatever the token: there is nothing to wait for.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/spinlock.hpp>

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace pools::fibers {

namespace detail {

template <class T>
class shared_state {
 public:
  using value_type = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

  template <class... A>
  void set_value(A&&... a) {
    sync_point("promise set_value");
    std::unique_lock guard(guard_);
    if (ready_) throw std::future_error(std::future_errc::promise_already_satisfied);
    value_.emplace(std::forward<A>(a)...);
    publish(guard);
  }

  void set_exception(std::exception_ptr e) {
    sync_point("promise set_exception");
    std::unique_lock guard(guard_);
    if (ready_) throw std::future_error(std::future_errc::promise_already_satisfied);
    error_ = std::move(e);
    publish(guard);
  }

  /// For ~promise: stores broken_promise unless a result is already there.
  void abandon() noexcept {
    sync_point("promise destroyed");
    std::unique_lock guard(guard_);
    if (ready_) return;
    error_ = std::make_exception_ptr(std::future_error(std::future_errc::broken_promise));
    publish(guard);
  }

  bool ready() const noexcept {
    std::lock_guard guard(guard_);
    return ready_;
  }

  void wait() {
    sync_point("future wait");
    if (ready()) return;
    waiter me;
    me.watch_stop(cancellation_point(), guard_, waiters_);  // throws when already stopped
    std::unique_lock guard(guard_);
    if (ready_) return;
    if (me.stop_requested()) throw operation_cancelled();
    waiters_.push_back(me);
    park(me, guard, "future", this);
    if (me.cancelled) throw operation_cancelled();
  }

  bool wait_until(std::chrono::steady_clock::time_point deadline) {
    sync_point("future wait_until");
    if (ready()) return true;
    const std::stop_token* stop = cancellation_point();  // throws when already stopped
    waiter me(deadline);  // may throw std::bad_alloc; made outside the spinlock: it allocates
    me.watch_stop(stop, guard_, waiters_);
    std::unique_lock guard(guard_);
    if (ready_) return true;
    if (me.stop_requested()) throw operation_cancelled();
    waiters_.push_back(me);
    if (park_until(me, guard, deadline, "future", this)) {
      if (me.cancelled) throw operation_cancelled();
      return true;
    }
    std::lock_guard again(guard_);
    waiters_.erase(me);
    return ready_;
  }

  /// After wait(), once: the value or the stored exception, both moved out (the reader then
  /// owns the exception alone; see join_handle::join on why that matters to TSan).
  value_type take() {
    std::unique_lock guard(guard_);
    if (error_) {
      std::exception_ptr e = std::exchange(error_, nullptr);
      guard.unlock();
      std::rethrow_exception(std::move(e));
    }
    return std::move(*value_);
  }

 private:
  void publish(std::unique_lock<pools::spinlock>& guard) noexcept {
    ready_ = true;
    waiter* list = waiters_.take_all_claimed();
    guard.unlock();
    wake_all(list);
  }

  mutable pools::spinlock guard_;
  bool ready_ = false;  // guarded by guard_, as is everything below
  std::optional<value_type> value_;
  std::exception_ptr error_;
  wait_queue waiters_;
};

}  // namespace detail

template <class T>
class promise;

template <class T>
class future {
  static_assert(!std::is_reference_v<T>, "pools::fibers::future<T&> is not supported");

 public:
  future() noexcept = default;
  future(future&&) noexcept = default;
  future& operator=(future&&) noexcept = default;

  bool valid() const noexcept { return state_ != nullptr; }
  bool is_ready() const {
    detail::sync_point("future is_ready");
    return state().ready();
  }

  /// Waits for the result and returns it (rethrows a stored exception). Invalidates the future,
  /// unless the wait is cancelled (operation_cancelled): then it stays valid.
  T get() {
    if (!state_) throw std::future_error(std::future_errc::no_state);
    state_->wait();
    auto s = std::move(state_);
    if constexpr (std::is_void_v<T>) {
      s->take();
    } else {
      return s->take();
    }
  }

  void wait() const { state().wait(); }

  template <class Clock, class Duration>
  std::future_status wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
    return state().wait_until(detail::to_steady(deadline)) ? std::future_status::ready
                                                           : std::future_status::timeout;
  }

  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
    return wait_until(detail::clock_now() + std::chrono::ceil<std::chrono::steady_clock::duration>(timeout));
  }

 private:
  friend class promise<T>;
  explicit future(std::shared_ptr<detail::shared_state<T>> s) noexcept : state_(std::move(s)) {}
  detail::shared_state<T>& state() const {
    if (!state_) throw std::future_error(std::future_errc::no_state);
    return *state_;
  }
  std::shared_ptr<detail::shared_state<T>> state_;
};

template <class T>
class promise {
  static_assert(!std::is_reference_v<T>, "pools::fibers::promise<T&> is not supported");

 public:
  promise() : state_(std::make_shared<detail::shared_state<T>>()) {}
  promise(promise&&) noexcept = default;
  promise& operator=(promise&& other) noexcept {
    if (this != &other) {
      abandon();
      state_ = std::move(other.state_);
      retrieved_ = other.retrieved_;
    }
    return *this;
  }
  ~promise() { abandon(); }

  /// Once only (future_already_retrieved after that).
  future<T> get_future() {
    if (!state_) throw std::future_error(std::future_errc::no_state);
    if (retrieved_) throw std::future_error(std::future_errc::future_already_retrieved);
    retrieved_ = true;
    return future<T>(state_);
  }

  template <class U = T>
    requires(!std::is_void_v<T> && std::is_constructible_v<T, U &&>)
  void set_value(U&& value) {
    state().set_value(std::forward<U>(value));
  }

  template <class U = T>
    requires std::is_void_v<U>
  void set_value() {
    state().set_value();
  }

  void set_exception(std::exception_ptr e) { state().set_exception(std::move(e)); }

 private:
  detail::shared_state<T>& state() {
    if (!state_) throw std::future_error(std::future_errc::no_state);
    return *state_;
  }
  void abandon() noexcept {
    if (state_) state_->abandon();
  }
  std::shared_ptr<detail::shared_state<T>> state_;
  bool retrieved_ = false;
};

}  // namespace pools::fibers
