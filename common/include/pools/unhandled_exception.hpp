// SPDX-License-Identifier: MIT
// pools/unhandled_exception.hpp — where an exception escaping a fire-and-forget task goes.
//
// A posted task has nobody to return an exception to. Letting it escape a worker thread would
// call std::terminate and take every other task down with it; swallowing it would hide bugs.
// So every executor catches it and calls report_unhandled_exception(), whose default handler
// prints the exception to stderr. Tests and applications can install their own handler.
#pragma once

#include <atomic>
#include <cstdio>
#include <exception>
#include <utility>

namespace pools {

using unhandled_exception_handler = void (*)(std::exception_ptr) noexcept;

// Header-only, so that a header-only pool (futures) needs no compiled library. The handler is an
// inline variable: one object in the whole program, shared libraries included (default visibility;
// GCC and Clang give it a unique symbol the dynamic linker binds once).
namespace detail {

inline void print_unhandled_exception(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "pools: a posted task threw an exception: %s\n", ex.what());
  } catch (...) {
    std::fprintf(stderr, "pools: a posted task threw a non-standard exception\n");
  }
}

inline std::atomic<unhandled_exception_handler> current_unhandled_exception_handler{
    &print_unhandled_exception};

}  // namespace detail

/// Installs `handler` (nullptr restores the default) and returns the previous one. Thread-safe.
inline unhandled_exception_handler set_unhandled_exception_handler(
    unhandled_exception_handler handler) noexcept {
  return detail::current_unhandled_exception_handler.exchange(
      handler != nullptr ? handler : &detail::print_unhandled_exception);
}

/// Hands `e` to the installed handler. Called by executors; never throws.
inline void report_unhandled_exception(std::exception_ptr e) noexcept {
  // acquire pairs with the exchange above so a freshly installed handler is the one called.
  detail::current_unhandled_exception_handler.load(std::memory_order_acquire)(std::move(e));
}

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
