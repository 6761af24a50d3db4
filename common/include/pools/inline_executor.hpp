// SPDX-License-Identifier: MIT
// pools/inline_executor.hpp — the simplest pools::Executor: run the task on the posting thread.
//
// It is a reference point for the conformance suite (a zero-thread executor must pass it too)
// and the "no parallelism" baseline. A task that posts from inside a task is not run
// recursively — a chain of a million re-posts would overflow the stack — but queued on a
// per-thread trampoline that the outermost post() drains before returning.
#pragma once

#include <pools/executor.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <cstddef>
#include <deque>
#include <utility>

namespace pools {

class inline_executor {
 public:
  inline_executor() = default;
  /// Accepts a thread count only so that generic code can construct every executor alike.
  explicit inline_executor(std::size_t /*threads*/) {}

  template <class F>
  void post(F&& f) {
    trampoline& t = local_trampoline();
    if (t.draining) {
      t.pending.emplace_back(std::forward<F>(f));
      return;
    }
    t.draining = true;
    {
      std::decay_t<F> first(std::forward<F>(f));
      invoke_reporting(first);
    }
    while (!t.pending.empty()) {
      task_function next = std::move(t.pending.front());
      t.pending.pop_front();
      invoke_reporting(next);
    }
    t.draining = false;
  }

  std::size_t concurrency() const noexcept { return 1; }

 private:
  struct trampoline {
    bool draining = false;
    std::deque<task_function> pending;
  };
  // Per thread, not per executor: a task may post to another inline_executor, and the order
  // "outer task finishes, then what it posted" must hold across both.
  static trampoline& local_trampoline() {
    thread_local trampoline t;
    return t;
  }
};

}  // namespace pools
