// SPDX-License-Identifier: MIT
// pools/coroutines/fork_scope.hpp — work-first fork/join (continuation stealing), beside when_all
// (help-first, child stealing).
//
//   task<std::uint64_t> fib(int n) {
//     if (n < 2) co_return n;
//     task<std::uint64_t> a = fib(n - 1), b = fib(n - 2);
//     fork_scope scope;            // this frame's join counter
//     co_await scope.fork(a);      // run a now; a thief may take the rest of fib meanwhile
//     co_await scope.call(b);      // run b now, on whichever worker fib is on by then
//     co_await scope.join();       // wait for a (free if nobody took fib)
//     co_return std::move(a).result() + std::move(b).result();   // finished: results at once
//   }
//
// What happens at `co_await scope.fork(a)`: the parent suspends, pushes *its own handle* (its
// continuation: the rest of the parent after the fork) onto the worker's deque, and transfers into
// the child. The child runs at once, on this thread, as a function call would. An idle worker
// that steals from this deque takes the parent's continuation, not a child: the continuation of
// the outermost parent is oldest, at the top of the deque, so a thief takes the biggest piece of
// work (the rest of the computation), as with when_all. When the child finishes it pops the
// deque: if it gets its parent back, nobody stole it, and the parent goes on here as after a call
// (no atomic read-modify-write: detail/fork_state.hpp, pools/fork_join_counter.hpp). If not, the
// parent is running elsewhere, and child and parent meet at the join: the last to arrive goes on.
//
// when_all does the opposite (help-first): it pushes the children and runs the first, so thieves
// take children, and every forked child is a frame waiting in a deque. Work-first keeps at most one
// continuation per fork level in the deque (the depth of the recursion, not its breadth), and each
// steal moves a whole continuation — every fork the parent has yet to make. README, "Work-first
// fork/join", and docs/optimizations.md measure both.
//
// Why a scope object rather than free fork()/join() functions: the join counter must live in the
// parent's frame (children on other threads point at it), and a local variable of the coroutine
// is exactly that — visible, with an obvious lifetime. Free functions would have to put it in
// every task's promise, also in the tasks that never fork.
//
// The children may be task<T> or stack_task<T> (stack_task.hpp: frames on the worker's stack of
// frames instead of a free list); a stack_task child needs a stack_task parent.
//
// Rules (as for std::thread, whose join it mirrors):
//  * join() before the scope ends. Between fork and join only the parent's own code runs; an
//    exception it throws there (not a child's: see below) would leave a running child pointing at
//    a destroyed scope, so the scope's destructor calls std::terminate when children may be
//    outstanding. Declare the scope after the tasks it forks: it is then destroyed first.
//  * A child's exception does not propagate at fork or call: the child runs to its end, the
//    first exception of any child of the scope is rethrown by join(), after every child has
//    finished (no child outlives the join, so references the children hold stay valid).
//  * Results are read after join(): `std::move(t).result()`, or `co_await std::move(t)`, which
//    returns at once on a finished task but is a suspension point all the same (task.hpp).
//  * Must run on a pool's thread (sync_wait, spawn or schedule() starts a task there). On the
//    tuned thread_pool the continuation goes onto the worker's own deque; on any other pool (the
//    textbook_pool) through its enqueue(), and every join then takes the counter's atomic path.
#pragma once

#include <pools/coroutines/detail/fork_state.hpp>
#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/frame_stack.hpp>
#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <coroutine>
#include <exception>
#include <stdexcept>

namespace pools::coroutines {

class fork_scope {
 public:
  fork_scope() = default;
  fork_scope(const fork_scope&) = delete;  // children point at it
  fork_scope& operator=(const fork_scope&) = delete;
  ~fork_scope() {
    if (state_.counter().pending() != 0) [[unlikely]]
      unjoined();  // a fork was not joined (see Rules)
  }

  // Promise: the child's promise type, a task<T>'s or a stack_task<T>'s.
  template <class Promise>
  struct fork_awaiter {
    detail::fork_state* state;
    std::coroutine_handle<Promise> child;

    bool await_ready() const noexcept { return false; }
    template <class Parent>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Parent> parent) {
      static_assert(
          detail::may_run_child<Parent, Promise>,
          "a stack_task is forked or called only by a stack_task (stack_task.hpp: its frame lives on "
          "its creator's stack of frames)");
      detail::worker* w = detail::tl_worker;
      scheduler* other = w != nullptr ? nullptr : current_scheduler();
      if (w == nullptr && other == nullptr) [[unlikely]]
        throw std::logic_error(
            "fork_scope::fork must be awaited on a worker thread of a pools::coroutines pool (start the "
            "coroutine with sync_wait, spawn or schedule())");
      // Locals only from here on: once the parent is in the deque a thief may resume it, and this
      // awaiter lives in the parent's frame.
      const std::coroutine_handle<Promise> c = child;
      detail::fork_state* s = state;
      c.promise().set_fork(s, parent);
      s->counter().forked();  // plain; published with the parent by the push (release)
      // Both ways of publishing the parent may throw std::bad_alloc before anything is published:
      // the deque's push when its ring is full and must grow (a chain of forks deeper than the
      // ring), enqueue() when the other pool's queue needs memory. Then nothing was forked: undo
      // the two lines above, so the scope's count is 0 again and the child is an unstarted task,
      // and the exception reaches the parent at this co_await (faults_coroutines, "fork_scope").
      try {
        if (w != nullptr) [[likely]] {
          w->pool->push_local(*w, parent, /*continuation=*/true);  // after the push: noexcept
        } else {
          other->enqueue(parent);
        }
      } catch (...) {
        s->counter().joined_inline();
        c.promise().set_fork(nullptr, {});
        throw;
      }
      return c;  // symmetric transfer: the child runs now, on this thread
    }
    void await_resume() const noexcept {}
  };

  template <class Promise>
  struct call_awaiter {
    detail::fork_state* state;
    std::coroutine_handle<Promise> child;

    bool await_ready() const noexcept { return false; }
    template <class Parent>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Parent> parent) const noexcept {
      static_assert(
          detail::may_run_child<Parent, Promise>,
          "a stack_task is forked or called only by a stack_task (stack_task.hpp: its frame lives on "
          "its creator's stack of frames)");
      child.promise().set_continuation(parent);
      return child;
    }
    // The child returned here: its exception, if any, waits for the join.
    void await_resume() const noexcept {
      if (child.promise().has_exception()) [[unlikely]]
        state->note_error(child.promise().exception());
    }
  };

  struct join_awaiter {
    detail::fork_state* state;

    // Nothing to wait for when every child finished on the parent's own thread (none stolen).
    bool await_ready() const noexcept { return state->counter().pending() == 0; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) const noexcept {
      detail::fork_state* s = state;
      // The parent may go on elsewhere (the last child resumes it) and free the frames on this
      // worker's stack: give the stack up before the arrival publishes them (frame_stack.hpp,
      // case (b)).
      frame_stack::leave_strand();
      if (s->counter().parent_arrives()) return parent;  // every child has arrived: go on
      // The last child resumes the parent (perhaps already, on another thread): run other work.
      return detail::next_local_work();
    }
    void await_resume() const { state->rethrow_if_error(); }
  };

  /// Runs `t` now on this thread; the rest of this coroutine may be stolen meanwhile. `t` must be
  /// a task that has not started; it stays owned by the caller (read its result after join()).
  template <class Task>
  [[nodiscard]] fork_awaiter<typename Task::promise_type> fork(Task& t) {
    require_unstarted(t);
    return {&state_, t.handle()};
  }

  /// Runs `t` now, as `co_await t` would, but keeps its exception for join(). Nothing is pushed:
  /// the last child of a fork/join needs no stealable continuation (its parent only joins next).
  template <class Task>
  [[nodiscard]] call_awaiter<typename Task::promise_type> call(Task& t) {
    require_unstarted(t);
    return {&state_, t.handle()};
  }

  /// Waits until every forked child has finished; rethrows the first child exception.
  [[nodiscard]] join_awaiter join() noexcept { return {&state_}; }

 private:
  template <class Task>
  static void require_unstarted(const Task& t) {
    if (!t.valid() || t.is_ready()) [[unlikely]]
      detail::throw_invalid_task("pools::coroutines::fork_scope: empty or finished task");
  }

  // Out of line and cold, so that the destructor is a test GCC inlines at every scope's end.
  [[noreturn, gnu::noinline, gnu::cold]] static void unjoined() noexcept { std::terminate(); }

  detail::fork_state state_;
};

}  // namespace pools::coroutines
