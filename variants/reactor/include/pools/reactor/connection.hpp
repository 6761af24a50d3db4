// SPDX-License-Identifier: MIT
// pools/reactor/connection.hpp — the base for objects that live as long as their pending handlers.
//
//   class session : public pools::reactor::connection<session> {
//    public:
//     explicit session(tcp::socket s) : connection(s.get_executor()), socket_(std::move(s)) {}
//     void start() { read(); }                      // called after make_shared, never in the ctor
//    private:
//     void read() { socket_.async_read_some(asio::buffer(buf_), bind(&session::on_read)); }
//     void on_read(boost::system::error_code ec, std::size_t n) { if (!ec) ...; }
//     tcp::socket socket_;
//     std::array<char, 4096> buf_;
//   };
//   std::make_shared<session>(std::move(socket))->start();  // and forget it
//
// Who owns a connection? Nobody outside: the handlers of its pending operations do. bind()
// makes a handler that holds a std::shared_ptr to the object, so the object lives exactly until
// the last handler that can touch it has run (or been destroyed unrun). When a read fails and
// the handler does not start another operation, the last owner goes away and so does the
// object — no delete, no leak, no use-after-free. The three classic ways to get this wrong, and
// what this header does about each (README.md has the long version):
//
//  1. A lambda that captures a local (or `this`) by reference, run after the scope has ended.
//     bind() captures the owning pointer *by value* and nothing else; a connection's state lives
//     in members, never in the locals of the function that started the operation.
//  2. A self-recursive std::function (`std::function<void()> loop = [&] { ...; post(loop); }`):
//     the lambda refers to the variable it is stored in — a local that is gone by the time the
//     re-posted copy runs — and copying it copies the reference, not the loop. Here a loop is a
//     member function that starts the next operation with bind(&T::step): each iteration's
//     handler owns the object, nothing refers to a local.
//  3. A shared_ptr cycle: the object stores a callback that holds a shared_ptr to the object
//     (a std::function member, a timer handler kept in a member). Neither is ever freed. bind()
//     handlers are meant to be handed to an asynchronous operation, which destroys them when it
//     completes; they are never stored in the object. Callbacks that *must* be stored (an "on
//     close" hook, a periodic report) use bind_weak(), which does not keep the object alive.
//
// Every handler of a connection runs on its executor (bind_executor): under the shared strategy
// pass a strand (pools/reactor/strand.hpp) so the handlers never run at once; under per_thread
// the io_context's own executor already is one.
#pragma once

#include <pools/trace.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace pools::reactor {

namespace detail {

// A completion handler calling a member function on an object it owns.
template <class T, class MemFn>
struct owning_call {
  std::shared_ptr<T> self;
  MemFn fn;
  template <class... A>
  void operator()(A&&... args) {
    POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(self.get()));  // an operation of this object completed
    std::invoke(fn, *self, std::forward<A>(args)...);
  }
};

// Same, but only observing: skipped when the object is already gone.
template <class T, class MemFn>
struct observing_call {
  std::weak_ptr<T> self;
  MemFn fn;
  template <class... A>
  void operator()(A&&... args) {
    if (const std::shared_ptr<T> alive = self.lock()) {
      POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(alive.get()));  // (not when the object is gone)
      std::invoke(fn, *alive, std::forward<A>(args)...);
    }
  }
};

}  // namespace detail

template <class Derived>
class connection : public std::enable_shared_from_this<Derived> {
 public:
  using executor_type = boost::asio::any_io_executor;

  /// The executor every handler of this object runs on (a strand, or a one-thread io_context).
  const executor_type& get_executor() const noexcept { return executor_; }

 protected:
  connection& operator=(const connection&) = delete;
  ~connection() = default;  // protected, non-virtual: destroyed only as the Derived it is

  /// The owning pointer. Throws std::bad_weak_ptr if the object is not (yet) owned by a
  /// shared_ptr — e.g. when called from Derived's constructor: start operations from a start()
  /// called after std::make_shared.
  std::shared_ptr<Derived> self() { return this->shared_from_this(); }

  /// A completion handler that calls (obj.*fn)(args...) on this object's executor and keeps the
  /// object alive until the handler has run or been destroyed. Hand it to one asynchronous
  /// operation; do not store it in the object (that is a cycle).
  template <class MemFn>
    requires std::is_member_function_pointer_v<MemFn>
  auto bind(MemFn fn) {
    return boost::asio::bind_executor(executor_, detail::owning_call<Derived, MemFn>{self(), fn});
  }

  /// Like bind(), but the handler does not keep the object alive: when it runs after the last
  /// owner has gone, it does nothing. For callbacks that are stored, or that must not extend
  /// the object's life (a periodic statistics timer, a registry's notification).
  template <class MemFn>
    requires std::is_member_function_pointer_v<MemFn>
  auto bind_weak(MemFn fn) {
    return boost::asio::bind_executor(executor_,
                                      detail::observing_call<Derived, MemFn>{this->weak_from_this(), fn});
  }

  /// Calls (obj.*fn)(args...) later on this object's executor, keeping the object alive until
  /// then. Arguments are stored by value (decay-copied), never by reference.
  template <class MemFn, class... Args>
    requires std::is_member_function_pointer_v<MemFn>
  void post(MemFn fn, Args&&... args) {
    boost::asio::post(executor_,
                      [owner = self(), fn, bound = std::make_tuple(std::forward<Args>(args)...)]() mutable {
                        std::apply([&](auto&... a) { std::invoke(fn, *owner, std::move(a)...); }, bound);
                      });
  }

 private:
  // Private, and Derived a friend: only Derived can construct a connection<Derived>, so
  // `class a : connection<b>` (whose self() would hand out a b that is not there) does not compile.
  friend Derived;
  explicit connection(executor_type ex) : executor_(std::move(ex)) {}
  connection(const connection&) = delete;

  executor_type executor_;
};

}  // namespace pools::reactor
