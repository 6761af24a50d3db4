// SPDX-License-Identifier: MIT
// pools/execution.hpp — every pools::Executor as a std::execution (P2300) scheduler.
//
//   pools::coroutines::thread_pool pool(4);
//   auto sched = pools::as_scheduler(pool);
//   auto [v] = stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then([] { return 42; })).value();
//
// P2300 splits "run this somewhere" into three parts. A *scheduler* is a handle to an execution
// resource; `schedule(sched)` returns a *sender*, a description of work that has not started;
// `connect(sender, receiver)` makes an *operation state*, and `start(op)` starts it. When the work
// is done the operation calls exactly one of the receiver's three channels: set_value (it ran),
// set_error (it could not run: here, the pool refused the task), set_stopped (the receiver's stop
// token asked it not to run). Everything else (then, when_all, let_value, continues_on, sync_wait)
// is generic code over those three parts, in stdexec (NVIDIA's reference implementation of P2300).
//
// The bridge needs only what pools::Executor promises: post(f) runs f exactly once on the
// executor's threads. So one adapter serves the four variants, their textbook pools and any pool a
// student writes (docs/std-execution.md maps each model onto senders in more detail).
//
// This header needs stdexec (header-only; not packaged by Debian): the build defines the target
// pools::execution when it finds stdexec (cmake/stdexec.cmake). Nothing else in the tree includes it.
#pragma once

#include <pools/executor.hpp>

#include <exception>
#include <stdexec/execution.hpp>
#include <utility>

namespace pools {

// The forward-progress guarantee of an executor's tasks, as P2300 names it. A pool of N threads
// that runs each task on one of them to completion gives `parallel`: once a task has started it
// keeps running (its thread is its own), but a task may not start until a thread is free — so a
// task that blocks waiting for a task posted after it can deadlock a full pool (the futures
// README's "nested waits"). An executor may say otherwise by specialising this.
template <class E>
inline constexpr stdexec::forward_progress_guarantee forward_progress_of =
    stdexec::forward_progress_guarantee::parallel;

template <Executor E>
class executor_scheduler;

namespace detail {

// What the bridge posts to the pool: one plain type for every receiver. Posting a lambda of the
// operation's class would hand the pool a new type per sender graph (a coroutine pool wraps each
// posted type in a coroutine frame of its own), and stdexec's graphs hold types of an anonymous
// namespace, which GCC rightly will not put into a frame defined in a header.
struct posted_operation {
  void (*run)(void*) noexcept;
  void* operation;
  void operator()() const noexcept { run(operation); }
};

// The operation `connect(schedule(sched), r)` makes. It is immovable (P2300 requires it): the task
// posted by start() points back at it, and the receiver's contract keeps it alive until one of
// the three completions has been called.
template <Executor E, class Receiver>
class schedule_operation {
 public:
  using operation_state_concept = stdexec::operation_state_t;

  schedule_operation(E& ex, Receiver r) noexcept(std::is_nothrow_move_constructible_v<Receiver>)
      : ex_(&ex), receiver_(std::move(r)) {}
  schedule_operation(const schedule_operation&) = delete;
  schedule_operation& operator=(const schedule_operation&) = delete;

  void start() & noexcept {
    try {
      ex_->post(posted_operation{&schedule_operation::run, this});
    } catch (...) {
      // The pool refused the task (shutting down, out of memory, a bounded queue that is full):
      // the work did not run and never will, and the receiver hears why.
      stdexec::set_error(std::move(receiver_), std::current_exception());
    }
  }

 private:
  // On one of the pool's threads. The stop token is read here, not in start(): a stop requested
  // while the task waited in the queue still prevents the work (then() after us never runs).
  static void run(void* operation) noexcept {
    auto& self = *static_cast<schedule_operation*>(operation);
    if (stdexec::get_stop_token(stdexec::get_env(self.receiver_)).stop_requested()) {
      stdexec::set_stopped(std::move(self.receiver_));
    } else {
      stdexec::set_value(std::move(self.receiver_));
    }
  }

  E* ex_;
  Receiver receiver_;
};

// The sender's environment answers one query: on which scheduler does it complete with a value?
// Algorithms such as continues_on and when_all read it to know where their continuation runs.
template <Executor E>
struct schedule_env {
  E* ex;
  auto query(stdexec::get_completion_scheduler_t<stdexec::set_value_t>) const noexcept {
    return executor_scheduler<E>(*ex);
  }
};

template <Executor E>
struct schedule_sender {
  using sender_concept = stdexec::sender_t;
  // set_error: post() may throw; set_stopped: the receiver's stop token may be triggered.
  using completion_signatures =
      stdexec::completion_signatures<stdexec::set_value_t(), stdexec::set_error_t(std::exception_ptr),
                                     stdexec::set_stopped_t()>;

  template <stdexec::receiver Receiver>
  auto connect(Receiver r) const noexcept(std::is_nothrow_move_constructible_v<Receiver>) {
    return schedule_operation<E, Receiver>(*ex, std::move(r));
  }
  schedule_env<E> get_env() const noexcept { return {ex}; }

  E* ex;
};

}  // namespace detail

// A copyable handle to an executor (P2300's scheduler concept): schedule() returns a sender that
// completes on one of the executor's threads. Two schedulers are equal when they name the same
// executor. The executor must outlive every scheduler and every operation made from it.
template <Executor E>
class executor_scheduler {
 public:
  using scheduler_concept = stdexec::scheduler_t;

  explicit executor_scheduler(E& ex) noexcept : ex_(&ex) {}

  detail::schedule_sender<E> schedule() const noexcept { return {ex_}; }

  stdexec::forward_progress_guarantee query(stdexec::get_forward_progress_guarantee_t) const noexcept {
    return forward_progress_of<E>;
  }

  E& executor() const noexcept { return *ex_; }

  bool operator==(const executor_scheduler&) const noexcept = default;

 private:
  E* ex_;
};

// pools::as_scheduler(pool): the pool as a P2300 scheduler.
template <Executor E>
executor_scheduler<E> as_scheduler(E& ex) noexcept {
  return executor_scheduler<E>(ex);
}

}  // namespace pools
