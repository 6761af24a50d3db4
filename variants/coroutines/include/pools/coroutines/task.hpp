// SPDX-License-Identifier: MIT
// pools/coroutines/task.hpp — task<T>: a lazy, move-only coroutine that produces a T.
//
//   task<int> answer() { co_return 42; }
//   task<int> twice() { int a = co_await answer(); co_return 2 * a; }
//
// Lazy: calling answer() allocates the frame and stops at the initial suspend point; nothing
// runs until the task is awaited (or spawned, or passed to when_all / sync_wait).
//
// Symmetric transfer: `co_await t` stores the awaiting coroutine in t's promise and *returns* t's
// handle from await_suspend, so the compiler jumps into t instead of calling it. When t finishes,
// its final awaiter returns the awaiting coroutine's handle and the compiler jumps back. Neither
// direction grows the thread's stack, so a chain of a million awaits runs in constant stack.
//
// Ownership: the task object owns the frame and destroys it exactly once — in ~task, whether the
// coroutine finished, or never started (then its parameters and locals are destroyed unrun). A
// spawned task hands its frame to the pool, which destroys it when the coroutine finishes.
//
// Exceptions: an exception escaping the body is stored in the promise and rethrown from the
// co_await that waits for the task (or from sync_wait, or from the when_all that ran it, or from
// result()).
//
// Stop token (stop_token.hpp, docs/cancellation.md): each promise holds a pointer to the
// std::stop_token its task runs under, or null. A task awaited with `co_await` inherits its
// awaiting task's pointer (when it has none of its own); when_all, when_any and with_stop_token
// set it for their children. The token itself lives in the frame or awaitable of whoever made
// it, which outlives the child (the child finishes before the co_await that runs it returns), so
// passing it on is a copy of a pointer, not of a reference-counted token.
#pragma once

#include <pools/coroutines/detail/fork_state.hpp>
#include <pools/coroutines/detail/join_state.hpp>
#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/frame_allocator.hpp>

#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools::coroutines {

template <class T = void>
class task;
template <class T = void>
class stack_task;  // stack_task.hpp: frames on the worker's stack of frames

namespace detail {

// The throw of a check on a hot path, out of line and cold: a `throw` written inline makes the
// checking function too big for GCC to inline into a coroutine body, and the call then costs
// about 6 instructions on every await (measured by callgrind: docs/optimizations.md, rung 21).
[[noreturn, gnu::noinline, gnu::cold]] inline void throw_invalid_task(const char* what) {
  throw std::invalid_argument(what);
}

/// The end of a coroutine that nobody awaits: reports its exception (spawn's policy), destroys the
/// frame, counts the task down on its pool, and returns what the worker should run next.
std::coroutine_handle<> finish_detached(std::coroutine_handle<> self, thread_pool* pool,
                                        std::exception_ptr error) noexcept;

class promise_base : public recycled_frame {
 public:
  std::suspend_always initial_suspend() const noexcept { return {}; }

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    // Where a finished task goes: to its when_all join, to its fork_scope's join (a forked
    // child: its parent is the continuation), to its awaiting coroutine (co_await), or, when
    // detached, to the pool. Nothing here touches the frame after handing it on: the receiver may
    // already be destroying it on another thread.
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) const noexcept {
      promise_base& p = self.promise();
      if (p.join_ != 0) {
        if ((p.join_ & fork_tag) == 0) {
          auto* join = reinterpret_cast<join_state*>(p.join_);
          // A failed child asks its siblings to stop (when the join has a stop source: its
          // when_all runs under a stop token). Before child_done: after it, the join may be gone.
          if (p.exception_ != nullptr) [[unlikely]]
            join->child_failed();
          return join->child_done();
        }
        return p.forked_into()->child_done(p.continuation_, p.exception_);
      }
      if (p.continuation_) return p.continuation_;
      if (p.detached_ != nullptr) return finish_detached(self, p.detached_, std::move(p.exception_));
      return std::noop_coroutine();
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() const noexcept { return {}; }

  void unhandled_exception() noexcept { exception_ = std::current_exception(); }

  void set_continuation(std::coroutine_handle<> c) noexcept { continuation_ = c; }
  void set_join(join_state* j) noexcept { join_ = reinterpret_cast<std::uintptr_t>(j); }
  /// A forked child (fork_scope::fork): `parent` is suspended at the fork and may be stolen.
  /// (nullptr: not forked after all.)
  void set_fork(fork_state* f, std::coroutine_handle<> parent) noexcept {
    join_ = f != nullptr ? reinterpret_cast<std::uintptr_t>(f) | fork_tag : 0;
    continuation_ = parent;
  }
  /// The fork_scope this task was forked into, or nullptr if it was not forked. Only where join_
  /// cannot name a when_all join: a forked child, or a stack_task (never a when_all child).
  fork_state* forked_into() const noexcept { return reinterpret_cast<fork_state*>(join_ & ~fork_tag); }
  /// The awaiting coroutine or, for a forked child, its parent (null if neither was set).
  std::coroutine_handle<> continuation() const noexcept { return continuation_; }
  /// The stored exception (null if none); fork_scope::call hands it to the scope's join.
  const std::exception_ptr& exception() const noexcept { return exception_; }
  void set_detached(thread_pool* pool) noexcept { detached_ = pool; }
  /// The stop token this task runs under, or nullptr (stop_token.hpp). Not owned.
  const std::stop_token* stop_token() const noexcept { return stop_token_; }
  void set_stop_token(const std::stop_token* token) noexcept { stop_token_ = token; }
  /// A task awaited by `parent` runs under the parent's token unless it was given one.
  void inherit_stop_token(const promise_base& parent) noexcept { inherit_stop_token(parent.stop_token_); }
  void inherit_stop_token(const std::stop_token* token) noexcept {
    if (stop_token_ == nullptr) stop_token_ = token;
  }
  bool has_exception() const noexcept { return exception_ != nullptr; }
  void rethrow_if_exception() const {
    if (static_cast<bool>(exception_)) [[unlikely]]
      rethrow_stored();
  }

 private:
  // Out of line and cold: keeps the check above small enough to inline into every await.
  [[noreturn, gnu::noinline, gnu::cold]] void rethrow_stored() const { std::rethrow_exception(exception_); }

  std::coroutine_handle<> continuation_;
  // The join this task is a child of: a when_all's join_state*, or a fork_scope's fork_state*
  // with the low bit set (both are aligned: the bit is free). One word, not two: the promise of
  // every task, and the final awaiter's test on every when_all child, stay as small as before.
  static constexpr std::uintptr_t fork_tag = 1;
  static_assert(alignof(join_state) > 1 && alignof(fork_state) > 1);
  std::uintptr_t join_ = 0;
  thread_pool* detached_ = nullptr;
  std::exception_ptr exception_;
  const std::stop_token* stop_token_ = nullptr;
};

/// The stop token of the coroutine `h` when it is a task's (nullptr for any other coroutine, or
/// a task that runs under none). Awaitables that can be cancelled call it from a templated
/// await_suspend, which sees the awaiting coroutine's promise type.
template <class Promise>
const std::stop_token* stop_token_of(std::coroutine_handle<Promise> h) noexcept {
  if constexpr (std::is_base_of_v<promise_base, Promise>) {
    return h.promise().stop_token();
  } else {
    return nullptr;
  }
}

// A task's result, or its exception: what task_promise and stack_task's promise share.
template <class T>
class promise_result : public promise_base {
 public:
  template <class U = T>
    requires std::is_convertible_v<U&&, T>
  void return_value(U&& value) noexcept(std::is_nothrow_constructible_v<T, U&&>) {
    value_.emplace(std::forward<U>(value));
  }

  /// The result, moved out; rethrows the stored exception instead.
  T take_result() {
    rethrow_if_exception();
    return std::move(*value_);
  }

 private:
  std::optional<T> value_;
};

template <class T>
class promise_result<T&> : public promise_base {
 public:
  void return_value(T& value) noexcept { value_ = std::addressof(value); }
  T& take_result() {
    rethrow_if_exception();
    return *value_;
  }

 private:
  T* value_ = nullptr;
};

template <>
class promise_result<void> : public promise_base {
 public:
  void return_void() noexcept {}
  void take_result() { rethrow_if_exception(); }
};

template <class T>
class stack_promise;  // stack_task.hpp
template <class Promise>
inline constexpr bool is_stack_promise = false;
template <class T>
inline constexpr bool is_stack_promise<stack_promise<T>> = true;
/// Whether a coroutine with promise `Parent` may run a child with promise `Child` (co_await,
/// fork, call): a stack_task only under a stack_task, which keeps its frames' lifetimes nested
/// in the stack of frames (stack_task.hpp).
template <class Parent, class Child>
inline constexpr bool may_run_child = !is_stack_promise<Child> || is_stack_promise<Parent>;

template <class T>
class task_promise final : public promise_result<T> {
 public:
  task<T> get_return_object() noexcept;
};

}  // namespace detail

template <class T>
class [[nodiscard]] task {
 public:
  using promise_type = detail::task_promise<T>;
  using handle_type = std::coroutine_handle<promise_type>;
  using value_type = T;

  task() noexcept = default;
  explicit task(handle_type h) noexcept : h_(h) {}
  task(task&& other) noexcept : h_(std::exchange(other.h_, {})) {}
  task& operator=(task&& other) noexcept {
    if (this != &other) {
      reset();
      h_ = std::exchange(other.h_, {});
    }
    return *this;
  }
  task(const task&) = delete;
  task& operator=(const task&) = delete;
  ~task() { reset(); }

  /// Whether this object owns a coroutine (false after a move, or when default-constructed).
  bool valid() const noexcept { return static_cast<bool>(h_); }
  /// Whether the coroutine has run to its end (its result or exception is waiting).
  bool is_ready() const noexcept { return h_ && h_.done(); }

  struct awaiter {
    handle_type h;
    bool await_ready() const {
      if (!h) [[unlikely]]
        detail::throw_invalid_task("pools::coroutines::task: co_await on an empty task");
      return h.done();
    }
    // Symmetric transfer into the task: it runs on this thread, right now, without a call frame.
    // An awaiting task passes its stop token on (one pointer copy).
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> awaiting) const noexcept {
      if constexpr (std::is_base_of_v<detail::promise_base, Promise>)
        h.promise().inherit_stop_token(awaiting.promise());
      h.promise().set_continuation(awaiting);
      return h;
    }
    T await_resume() const { return h.promise().take_result(); }
  };
  /// Runs the task (if not yet run) and returns its result or rethrows its exception. The task
  /// object still owns the frame afterwards and frees it when it goes out of scope.
  awaiter operator co_await() && noexcept { return awaiter{h_}; }

  /// The result of a task that has already finished (a fork_scope's child after the join), moved
  /// out, or its exception rethrown: the same as `co_await std::move(t)`, but a plain call. A
  /// co_await is a suspension point even when it does not suspend, and GCC stores its awaiter and
  /// the value it resumes with in the frame (docs/results/history/optimizations.md has the
  /// count). A task never run, or empty: std::invalid_argument. A forked child only after the
  /// join: before it, the child may still be running on another thread, and reading whether it
  /// finished would race with its end. The value is moved out: a second call gets what is left.
  T result() && {
    if (!is_ready()) [[unlikely]]
      detail::throw_invalid_task("pools::coroutines::task: result() of a task that has not finished");
    return h_.promise().take_result();
  }

  /// For the library's own awaitables (when_all, spawn, sync_wait): the owned handle.
  handle_type handle() const noexcept { return h_; }
  /// Gives up ownership: the caller now destroys the frame (spawn hands it to the pool).
  handle_type release() noexcept { return std::exchange(h_, {}); }

 private:
  void reset() noexcept {
    if (h_) std::exchange(h_, {}).destroy();
  }
  handle_type h_;
};

namespace detail {
template <class T>
task<T> task_promise<T>::get_return_object() noexcept {
  return task<T>(std::coroutine_handle<task_promise>::from_promise(*this));
}
}  // namespace detail

}  // namespace pools::coroutines
