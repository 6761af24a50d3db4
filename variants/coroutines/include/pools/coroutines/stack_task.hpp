// SPDX-License-Identifier: MIT
// pools/coroutines/stack_task.hpp — stack_task<T>: a task<T> whose frame is bumped on the worker's
// stack of frames (frame_stack.hpp) instead of taken from a free list, for fork/join.
//
//   stack_task<std::uint64_t> fib(int n) {
//     if (n < 2) co_return n;
//     stack_task<std::uint64_t> a = fib(n - 1), b = fib(n - 2);   // a, then b, on the stack
//     fork_scope scope;
//     co_await scope.fork(a);
//     co_await scope.call(b);
//     co_await scope.join();
//     co_return std::move(a).result() + std::move(b).result();
//   }                                                             // b, then a, popped
//   std::uint64_t r = sync_wait(pool, fib(30));
//
// It is used exactly as task<T> with fork_scope (fork, call, join), with `co_await`, and as the
// root of sync_wait. What it buys: a frame costs a bump and a pop on the running worker's
// stack, where task<T>'s costs a pop and a push on a per-thread free list with its counters
// (docs/optimizations.md, the rung after work-first fork/join).
//
// The stack discipline holds because of what a stack_task cannot do:
//  * It is not handed to the pool: spawn, try_spawn and spawn_when_room refuse it at compile time,
//    and it cannot go into when_all or when_any (they take task<T>). A detached frame would be
//    freed when it finishes, in no order with its creator's other frames.
//  * It runs only under a stack_task: co_await, fork and call of a stack_task from any other
//    coroutine do not compile (sync_wait is the way in).
//  * The rule the compiler cannot check: create a stack_task only in a stack_task's body, or as
//    sync_wait's argument. Then every coroutine that owns frames on a stack is a stack_task, and
//    each of its suspensions is one of those frame_stack.hpp lists: a fork or call of a stack_task
//    (the strand goes on), a join (case b), or any other awaitable — a lock, an event, a timer,
//    schedule(), a task<T> — before which await_transform below gives the worker's stack up (case
//    c), since the stack_task may resume on another thread. A task<T> (or a lambda, or a plain
//    function run by a worker) that makes one puts its frame on the worker's current stack too, but
//    nothing gives that stack up when the task<T> suspends: holding the stack_task across a
//    suspension, as in `task<int> g(thread_pool& p) { stack_task<int> s = leaf(); co_await
//    p.schedule(); co_return 0; }`, lets the worker go on pushing on the stack while s is destroyed
//    on another thread — a race on its top. The release's slow path catches it (the frame's stack
//    is neither the thread's current one nor given up: std::terminate with a message); every
//    release takes that path under AddressSanitizer, so the sanitized tests check every frame, but
//    an optimised build sees it only when the fast path's compare fails. (The creation itself is a
//    call of the coroutine function, which no type can refuse by its caller.)
//  * Its frame is freed when the object is destroyed, by the coroutine that holds it: as a local,
//    in the reverse order of creation. It has a move constructor only because Clang 14 needs one
//    to return the object from the coroutine call; moving it anywhere else breaks that order, and
//    the release of a frame that is not its stack's top calls std::terminate with a message.
//  * Between a fork and its join the parent destroys no stack_task it created before the fork:
//    its continuation may have been stolen, and the frame lies in the middle of the victim's
//    live stack. Declaring the tasks before the fork_scope keeps this (the scope is destroyed
//    first, and refuses to be destroyed unjoined).
#pragma once

#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/frame_stack.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>

#include <coroutine>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace pools::coroutines {

namespace detail {

// Awaitables a stack_task awaits without giving its stack up: another stack_task (it runs inline,
// in the same strand), a fork_scope's fork and call of one (the child runs inline; the parent's
// frames stay until its join), and any join (it gives the stack up itself before its arrival).
template <class A>
inline constexpr bool keeps_strand = false;
template <class T>
inline constexpr bool keeps_strand<stack_task<T>> = true;
template <class T>
inline constexpr bool keeps_strand<fork_scope::fork_awaiter<stack_promise<T>>> = true;
template <class T>
inline constexpr bool keeps_strand<fork_scope::call_awaiter<stack_promise<T>>> = true;
template <>
inline constexpr bool keeps_strand<fork_scope::join_awaiter> = true;

// Any other awaitable, awaited by a stack_task: the worker gives its stack up before the
// awaitable's await_suspend publishes the coroutine (frame_stack.hpp, case c). Awaiter is the
// awaitable's awaiter: a reference to the operand when that is its own awaiter (the operand lives
// until the end of the full-expression of the co_await), else what operator co_await returned.
template <class Awaiter>
struct leaving_strand {
  Awaiter inner;

  bool await_ready() { return inner.await_ready(); }
  template <class Promise>
  decltype(auto) await_suspend(std::coroutine_handle<Promise> self) {
    frame_stack::leave_strand();
    return inner.await_suspend(self);
  }
  decltype(auto) await_resume() { return inner.await_resume(); }
};

template <class A>
concept has_member_co_await = requires(A&& a) { std::forward<A>(a).operator co_await(); };
template <class A>
concept has_free_co_await = requires(A&& a) { operator co_await(std::forward<A>(a)); };

template <class T>
class stack_promise final : public promise_result<T> {
 public:
  stack_task<T> get_return_object() noexcept;

  static void* operator new(std::size_t size) {
    // The stack keeps frames 16-aligned, as operator new does; an over-aligned result would need
    // more (the coroutine's over-aligned locals too, which no type here can see).
    static_assert(alignof(T) <= frame_stack::header_size,
                  "stack_task<T>: a T aligned beyond 16 bytes is not supported (frame_stack.hpp)");
    return frame_stack::allocate(size);
  }
  static void operator delete(void* frame, std::size_t size) noexcept { frame_stack::release(frame, size); }

  // The end of a stack_task. It finishes in two ways only: forked (fork_scope::fork: join_ names
  // the scope, the parent is the continuation), or awaited (co_await, fork_scope::call,
  // sync_wait: the awaiting coroutine is the continuation); it is never a when_all child nor
  // detached (see the header comment), so the continuation is always set. task<T>'s final awaiter
  // tells four ends apart, too much for GCC to inline into every body, and then calls
  // fork_state::child_done for a forked child: two calls. This one is a single test, inlined into
  // the coroutine's body, and a forked child's end is the one call of child_done (the same three
  // cases, and the same give-up of the worker's stack before the arrival: fork_state.hpp).
  // child_done itself stays a call: inlined, its pop and arrival would be copied into every body,
  // which on binary forks (fib, bench/instructions.py's fork_join_framestack) costs more than the
  // call it saves.
  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    [[gnu::always_inline]] std::coroutine_handle<> await_suspend(
        std::coroutine_handle<stack_promise> self) const noexcept {
      const stack_promise& p = self.promise();
      if (fork_state* f = p.forked_into()) return f->child_done(p.continuation(), p.exception());
      return p.continuation();
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() const noexcept { return {}; }

  // What keeps the strand passes through unchanged (noexcept: nothing to unwind on the hot path).
  template <class U>
  stack_task<U>&& await_transform(stack_task<U>&& t) noexcept {
    return std::move(t);
  }
  template <class U>
  fork_scope::fork_awaiter<stack_promise<U>> await_transform(
      fork_scope::fork_awaiter<stack_promise<U>> a) noexcept {
    return a;
  }
  template <class U>
  fork_scope::call_awaiter<stack_promise<U>> await_transform(
      fork_scope::call_awaiter<stack_promise<U>> a) noexcept {
    return a;
  }
  fork_scope::join_awaiter await_transform(fork_scope::join_awaiter a) noexcept { return a; }

  // Anything else gives the stack up before it suspends.
  template <class A>
    requires(!keeps_strand<std::remove_cvref_t<A>>)
  decltype(auto) await_transform(A&& a) {
    if constexpr (has_member_co_await<A>) {
      return leaving_strand<decltype(std::forward<A>(a).operator co_await())>{
          std::forward<A>(a).operator co_await()};
    } else if constexpr (has_free_co_await<A>) {
      return leaving_strand<decltype(operator co_await(std::forward<A>(a)))>{operator co_await(
          std::forward<A>(a))};
    } else {
      return leaving_strand<A&&>{std::forward<A>(a)};
    }
  }
};

template <class T>
inline constexpr bool always_false = false;

}  // namespace detail

template <class T>
class [[nodiscard]] stack_task {
 public:
  using promise_type = detail::stack_promise<T>;
  using handle_type = std::coroutine_handle<promise_type>;
  using value_type = T;

  explicit stack_task(handle_type h) noexcept : h_(h) {}
  // For Clang 14, which moves the coroutine's return object out of get_return_object(); see the
  // header comment: not for moving a task anywhere else. No assignment.
  stack_task(stack_task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  stack_task& operator=(stack_task&&) = delete;
  stack_task(const stack_task&) = delete;
  stack_task& operator=(const stack_task&) = delete;
  ~stack_task() {
    if (h_) h_.destroy();  // pops the frame: it must be the top of its stack
  }

  bool valid() const noexcept { return static_cast<bool>(h_); }
  bool is_ready() const noexcept { return h_ && h_.done(); }

  struct awaiter {
    handle_type h;
    bool await_ready() const {
      if (!h) [[unlikely]]
        detail::throw_invalid_task("pools::coroutines::stack_task: co_await on an empty task");
      return h.done();
    }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> awaiting) const noexcept {
      static_assert(detail::is_stack_promise<Promise>,
                    "a stack_task is awaited only by a stack_task (stack_task.hpp); start it with sync_wait");
      h.promise().inherit_stop_token(awaiting.promise());
      h.promise().set_continuation(awaiting);
      return h;
    }
    T await_resume() const { return h.promise().take_result(); }
  };
  /// Runs the task (if not yet run) and returns its result or rethrows its exception. The frame
  /// stays until the task object is destroyed.
  awaiter operator co_await() && noexcept { return awaiter{h_}; }

  /// As task<T>::result(): the result of a finished task without the suspension point of a
  /// co_await; std::invalid_argument if it has not run to its end. A forked child only after the
  /// join.
  T result() && {
    if (!is_ready()) [[unlikely]]
      detail::throw_invalid_task("pools::coroutines::stack_task: result() of a task that has not finished");
    return h_.promise().take_result();
  }

  /// For fork_scope and sync_wait: the owned handle.
  handle_type handle() const noexcept { return h_; }

 private:
  handle_type h_;
};

/// Up to N stack_tasks made one after another and destroyed in reverse (LIFO, as their frames
/// need), for a fan-out known only at run time (nqueens: a child per free column). Each task is
/// constructed in place from the call that makes it, so nothing is moved:
///   stack_task_array<std::uint64_t, 16> kids;
///   for (int c = 0; c < n; ++c) if (ok(c)) kids.emplace([&] { return place(c); });
template <class T, std::size_t N>
class stack_task_array {
 public:
  // slots_ is left as it is: each slot is raw storage until emplace() constructs a task in it.
  stack_task_array() noexcept {}  // NOLINT(cppcoreguidelines-pro-type-member-init)
  stack_task_array(const stack_task_array&) = delete;
  stack_task_array& operator=(const stack_task_array&) = delete;
  ~stack_task_array() {
    while (size_ > 0) (*this)[--size_].~stack_task();
  }

  /// Makes the next task: `make()` must return a stack_task<T> (a call of its coroutine).
  template <class F>
  stack_task<T>& emplace(F&& make) {
    if (size_ == N) [[unlikely]]
      detail::throw_invalid_task("pools::coroutines::stack_task_array: full");
    auto* t = ::new (static_cast<void*>(slots_[size_])) stack_task<T>(std::forward<F>(make)());
    ++size_;
    return *t;
  }
  std::size_t size() const noexcept { return size_; }
  stack_task<T>& operator[](std::size_t i) noexcept {
    return *std::launder(reinterpret_cast<stack_task<T>*>(slots_[i]));
  }

 private:
  alignas(stack_task<T>) unsigned char slots_[N][sizeof(stack_task<T>)];
  std::size_t size_ = 0;
};

namespace detail {
template <class T>
stack_task<T> stack_promise<T>::get_return_object() noexcept {
  return stack_task<T>(std::coroutine_handle<stack_promise>::from_promise(*this));
}
}  // namespace detail

}  // namespace pools::coroutines
