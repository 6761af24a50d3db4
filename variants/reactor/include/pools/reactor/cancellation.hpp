// SPDX-License-Identifier: MIT
// pools/reactor/cancellation.hpp — Asio's per-operation cancellation on the reactor's timer and
// strand, and the bridge from std::stop_token.
//
// Asio cancels one asynchronous operation through the handler it is to complete: bind a
// cancellation *slot* to the handler, keep the matching *signal*, and emit() it to ask that
// operation to end early. The operation then completes at once, with
// asio::error::operation_aborted:
//
//   reactor::cancellation_signal cancel;
//   auto strand = reactor::make_strand(ex);
//   reactor::async_wait_for(strand, 5s, reactor::bind_cancellation_slot(cancel.slot(),
//       [](boost::system::error_code ec) { /* ec == asio::error::operation_aborted */ }));
//   asio::post(strand, [&] { cancel.emit(reactor::cancellation_type::terminal); });
//
// Asio's rules, which hold here too:
//   * An operation installs its cancellation handler in the slot when it starts and removes it
//     when it completes. An emit with nothing installed does nothing: a cancellation that
//     arrives after the completion is a no-op. One signal serves one operation at a time; a
//     chain reuses it, step after step. So an emit that lands between a completion and its
//     handler (a timer that has just fired) cancels nothing, and the handler would start the
//     next step unaware: a chain checks its token before each step (stop_signal::stop_requested).
//     async_post leaves no such gap (its step and handler run in one strand handler).
//   * emit() runs where the operation runs: on its strand. A signal and its slot have no lock (the
//     strand is the lock), so another thread posts the emit to the strand. stop_signal (below)
//     does exactly that for a std::stop_token, the way the rest of this project cancels.
//   * The signal outlives the operations bound to it.
//
// Boost 1.77 and later have these types in Asio (boost/asio/cancellation_signal.hpp), and the
// names below are Asio's own. Boost 1.74 (Debian 12) predates them: there this header defines the
// same names with the same behaviour, for the part used here (emit, slot, assign, emplace, clear,
// bind_cancellation_slot, get_associated_cancellation_slot). Asio's own I/O objects on 1.74 ignore
// such a slot; the reactor's operations below honour it on both.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/version.hpp>

#include <chrono>
#include <memory>
#include <stop_token>
#include <type_traits>
#include <utility>

#if BOOST_VERSION >= 107700
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/cancellation_type.hpp>
#endif

namespace pools::reactor {

#if BOOST_VERSION >= 107700

using boost::asio::bind_cancellation_slot;
using boost::asio::cancellation_signal;
using boost::asio::cancellation_slot;
using boost::asio::cancellation_type;
using boost::asio::get_associated_cancellation_slot;

#else  // Boost < 1.77: the same names, defined here

/// What an emit asks for (Asio's values). Every operation of this header treats any of them as
/// "end now": a timer wait or a queued step has nothing to undo.
enum class cancellation_type : unsigned int {
  none = 0,
  terminal = 1,
  partial = 2,
  total = 4,
  all = 0xffffffffu
};

class cancellation_slot;

/// Asks the operation bound to its slot to end early. Not copyable: slots point into it.
class cancellation_signal {
 public:
  cancellation_signal() = default;
  cancellation_signal(const cancellation_signal&) = delete;
  cancellation_signal& operator=(const cancellation_signal&) = delete;

  /// Calls the installed cancellation handler, if any (on the operation's strand).
  void emit(cancellation_type type) {
    if (handler_) handler_->call(type);
  }
  /// The slot to bind to an operation's handler (bind_cancellation_slot).
  cancellation_slot slot() noexcept;

 private:
  friend class cancellation_slot;
  struct handler_base {
    virtual ~handler_base() = default;
    virtual void call(cancellation_type type) = 0;
  };
  template <class H>
  struct handler final : handler_base {
    template <class... A>
    explicit handler(A&&... a) : h(std::forward<A>(a)...) {}
    void call(cancellation_type type) override { h(type); }
    H h;
  };
  std::unique_ptr<handler_base> handler_;
};

/// Where an operation installs the handler its signal's emit() calls. A small handle (a pointer
/// to the signal); default-constructed it is connected to nothing.
class cancellation_slot {
 public:
  cancellation_slot() noexcept = default;

  /// Installs h, replacing what was there; returns the installed copy.
  template <class H, class... A>
  H& emplace(A&&... a) {
    auto h = std::make_unique<cancellation_signal::handler<H>>(std::forward<A>(a)...);
    H& installed = h->h;
    signal_->handler_ = std::move(h);
    return installed;
  }
  template <class H>
  std::decay_t<H>& assign(H&& h) {
    return emplace<std::decay_t<H>>(std::forward<H>(h));
  }
  /// Removes the installed handler: a later emit() does nothing.
  void clear() {
    if (signal_ != nullptr) signal_->handler_.reset();
  }
  bool is_connected() const noexcept { return signal_ != nullptr; }
  bool has_handler() const noexcept { return signal_ != nullptr && signal_->handler_ != nullptr; }
  friend bool operator==(const cancellation_slot&, const cancellation_slot&) = default;

 private:
  friend class cancellation_signal;
  explicit cancellation_slot(cancellation_signal* signal) noexcept : signal_(signal) {}
  cancellation_signal* signal_ = nullptr;
};

inline cancellation_slot cancellation_signal::slot() noexcept {
  return cancellation_slot(this);
}

/// A handler with a cancellation slot bound to it: called like the handler it wraps.
template <class T>
class cancellation_slot_binder {
 public:
  using target_type = T;
  using cancellation_slot_type = cancellation_slot;

  template <class U>
  cancellation_slot_binder(cancellation_slot slot, U&& target)
      : slot_(slot), target_(std::forward<U>(target)) {}

  cancellation_slot get_cancellation_slot() const noexcept { return slot_; }
  T& get() noexcept { return target_; }
  const T& get() const noexcept { return target_; }

  template <class... A>
  decltype(auto) operator()(A&&... a) {
    return target_(std::forward<A>(a)...);
  }

 private:
  cancellation_slot slot_;
  T target_;
};

template <class H>
cancellation_slot_binder<std::decay_t<H>> bind_cancellation_slot(cancellation_slot slot, H&& h) {
  return {slot, std::forward<H>(h)};
}

/// The slot bound to `h`, or an unconnected one.
template <class H>
cancellation_slot get_associated_cancellation_slot(const H& h) noexcept {
  if constexpr (requires { h.get_cancellation_slot(); })
    return h.get_cancellation_slot();
  else
    return {};
}

#endif  // BOOST_VERSION

/// Waits `delay`, then runs h(error_code{}) on `strand`. If the slot bound to h is emitted first,
/// the timer is cancelled and h(asio::error::operation_aborted) runs at once. `strand` serialises
/// (make_strand(ex)); start the wait and emit on it. h runs exactly once, either way.
template <class Rep, class Period, class Handler>
void async_wait_for(const boost::asio::any_io_executor& strand, std::chrono::duration<Rep, Period> delay,
                    Handler&& handler) {
  auto slot = get_associated_cancellation_slot(handler);
  auto timer = std::make_shared<boost::asio::steady_timer>(strand, delay);
  // The slot holds a weak reference: the completion below owns the timer, and clears the slot
  // before anything is destroyed, so an emit never reaches a timer that has gone.
  if (slot.is_connected()) {
    slot.assign([weak = std::weak_ptr<boost::asio::steady_timer>(timer)](cancellation_type type) {
      if (type == cancellation_type::none) return;
      if (auto t = weak.lock()) t->cancel();  // the wait completes with operation_aborted
    });
  }
  auto& t = *timer;
  t.async_wait([timer = std::move(timer), slot,
                h = std::forward<Handler>(handler)](const boost::system::error_code& ec) mutable {
    if (slot.is_connected()) slot.clear();  // from here an emit is a no-op
    h(ec);
  });
}

/// One step of a chain on a strand: runs work() on `strand`, then h(error_code{}). If the slot
/// bound to h is emitted before work() has started, work() never runs and
/// h(asio::error::operation_aborted) runs in its place. Start the step and emit on the strand.
template <class Work, class Handler>
void async_post(const boost::asio::any_io_executor& strand, Work&& work, Handler&& handler) {
  auto slot = get_associated_cancellation_slot(handler);
  // Only the strand touches it (the step and the emit both run there): a plain bool.
  auto cancelled = std::make_shared<bool>(false);
  if (slot.is_connected()) {
    slot.assign([cancelled](cancellation_type type) {
      if (type != cancellation_type::none) *cancelled = true;
    });
  }
  boost::asio::post(
      strand, [cancelled, slot, w = std::forward<Work>(work), h = std::forward<Handler>(handler)]() mutable {
        if (slot.is_connected()) slot.clear();
        if (*cancelled) return h(boost::system::error_code(boost::asio::error::operation_aborted));
        w();
        h(boost::system::error_code());
      });
}

/// A cancellation_signal that a std::stop_token emits: the bridge from the project's stop tokens
/// to Asio's per-operation cancellation. The stop callback runs on whichever thread calls
/// request_stop(), so it does not emit there: it posts the emit to `strand`, where the operations
/// bound to slot() run. The signal is shared with that posted emit, so destroying the stop_signal
/// while an emit is on its way is safe; the operations bound to it must still end first (hold it
/// in their handler).
class stop_signal {
 public:
  stop_signal(std::stop_token token, boost::asio::any_io_executor strand,
              cancellation_type type = cancellation_type::terminal)
      : token_(std::move(token)),
        signal_(std::make_shared<cancellation_signal>()),
        on_stop_(token_, emit_on{signal_, std::move(strand), type}) {}
  stop_signal(const stop_signal&) = delete;
  stop_signal& operator=(const stop_signal&) = delete;

  /// The slot to bind to the operations this token cancels (one at a time).
  cancellation_slot slot() noexcept { return signal_->slot(); }
  /// The token's state: what a chain checks before it starts its next step (see above).
  bool stop_requested() const noexcept { return token_.stop_requested(); }

 private:
  struct emit_on {
    std::shared_ptr<cancellation_signal> signal;
    boost::asio::any_io_executor strand;
    cancellation_type type = cancellation_type::terminal;
    // A stop callback must not throw: out of memory for the post ends the program, as any
    // exception from a std::stop_callback does.
    void operator()() const {
      boost::asio::post(strand, [signal = signal, type = type] { signal->emit(type); });
    }
  };
  std::stop_token token_;
  std::shared_ptr<cancellation_signal> signal_;  // before on_stop_: it may run in the constructor
  std::stop_callback<emit_on> on_stop_;
};

}  // namespace pools::reactor
