// SPDX-License-Identifier: MIT
// pools/fibers/join_handle.hpp — what spawn() returns: the way to a fiber's result.
//
//   auto h = pool.spawn([] { return compute(); });
//   ... other work ...
//   int r = h.join();   // the result, or the fiber's exception rethrown here
//
// join() inside a fiber suspends only that fiber; from a plain thread it blocks the thread. If
// the spawned callable has not started yet, join() runs it right here on the caller's stack —
// the caller was going to wait for it anyway, and this is what makes a spawn that is joined
// soon cost little more than a function call (README, "run until it blocks").
//
// A handle that is destroyed while still joinable joins (like std::jthread, so a fiber cannot
// outlive the data its captures point to); an exception then goes to
// pools::report_unhandled_exception, since a destructor cannot throw it. detach() lets the
// fiber run on with no one to collect its result: its exception, if any, is reported.
#pragma once

#include <pools/fibers/detail/runtime.hpp>
#include <pools/fibers/detail/task.hpp>
#include <pools/fibers/detail/waiter.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <exception>
#include <stdexcept>
#include <utility>

namespace pools::fibers {

class thread_pool;
class simulated;

template <class R>
class [[nodiscard]] join_handle {
 public:
  join_handle() noexcept = default;
  join_handle(join_handle&& other) noexcept : task_(std::exchange(other.task_, nullptr)) {}
  join_handle& operator=(join_handle&& other) noexcept {
    if (this != &other) {
      join_quietly();
      task_ = std::exchange(other.task_, nullptr);
    }
    return *this;
  }
  join_handle(const join_handle&) = delete;
  join_handle& operator=(const join_handle&) = delete;
  ~join_handle() { join_quietly(); }

  /// True until join() or detach().
  bool joinable() const noexcept { return task_ != nullptr; }

  /// True when the result is ready (join() will not wait). Never blocks.
  bool done() const noexcept {
    detail::sync_point("join_handle done");
    return task_ != nullptr &&
           (task_->state.load(std::memory_order_acquire) & detail::task_base::done_bit) != 0;
  }

  /// Waits for the fiber and returns its result, or rethrows its exception. Once only: throws
  /// std::logic_error when not joinable.
  R join() {
    if (task_ == nullptr) throw std::logic_error("pools::fibers::join_handle::join: not joinable");
    detail::task_with_result<R>* t = std::exchange(task_, nullptr);
    struct releaser {
      detail::task_base* t;
      ~releaser() { detail::release(t); }
    } release_at_exit{t};
    detail::wait_for_task(*t);
    // Move the exception out: the joiner's thread then holds the only reference, and the task
    // (which the fiber's worker may free later) no longer shares the exception object. Sharing it
    // would be correct (libstdc++ counts references atomically) but invisible to ThreadSanitizer,
    // which cannot see inside the uninstrumented libstdc++.
    if (t->error) std::rethrow_exception(std::exchange(t->error, nullptr));
    if constexpr (std::is_reference_v<R>) {
      return t->result->get();
    } else if constexpr (!std::is_void_v<R>) {
      return std::move(*t->result);
    }
  }

  /// Lets the fiber run on unobserved. Throws std::logic_error when not joinable.
  void detach() {
    if (task_ == nullptr) throw std::logic_error("pools::fibers::join_handle::detach: not joinable");
    detail::detach_task(*std::exchange(task_, nullptr));
  }

 private:
  friend class thread_pool;
  friend class simulated;
  explicit join_handle(detail::task_with_result<R>* t) noexcept : task_(t) {}

  void join_quietly() noexcept {
    if (task_ == nullptr) return;
    try {
      join();
    } catch (...) {
      pools::report_unhandled_exception(std::current_exception());
    }
  }

  detail::task_with_result<R>* task_ = nullptr;
};

}  // namespace pools::fibers
