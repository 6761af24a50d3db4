// SPDX-License-Identifier: MIT
// pools/unhandled_exception.hpp — where an exception escaping a fire-and-forget task goes.
//
// A posted task has nobody to return an exception to. Letting it escape a worker thread would
// call std::terminate and take every other task down with it; swallowing it would hide bugs.
// So every executor catches it and calls report_unhandled_exception(), whose default handler
// prints the exception to stderr. Tests and applications can install their own handler.
#pragma once

#include <exception>
#include <utility>

namespace pools {

using unhandled_exception_handler = void (*)(std::exception_ptr) noexcept;

/// Installs `handler` (nullptr restores the default) and returns the previous one. Thread-safe.
unhandled_exception_handler set_unhandled_exception_handler(unhandled_exception_handler handler) noexcept;

/// Hands `e` to the installed handler. Called by executors; never throws.
void report_unhandled_exception(std::exception_ptr e) noexcept;

/// Runs f(), reporting instead of propagating any exception. Executors call tasks through this.
template <class F>
void invoke_reporting(F& f) noexcept {
  try {
    f();
  } catch (...) {
    report_unhandled_exception(std::current_exception());
  }
}

/// A move-only task that runs fn through invoke_reporting(). Called with an exception instead,
/// task(e), it reports e and never calls fn: what a pool does when it cannot start the task (a
/// fiber without a stack). The fire-and-forget twin of promised_task (pools/submit.hpp).
template <class F>
auto reporting_task(F&& fn) {
  return [fn = std::forward<F>(fn)](std::exception_ptr failed = nullptr) mutable noexcept {
    if (failed) {
      report_unhandled_exception(std::move(failed));
    } else {
      invoke_reporting(fn);
    }
  };
}

}  // namespace pools
