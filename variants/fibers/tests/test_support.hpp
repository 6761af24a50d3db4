// SPDX-License-Identifier: MIT
// Shared helpers for the fibers tests.
#pragma once

#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace fibers_test {

/// Sanitized builds run several times slower: stress loops shrink (never vanish) there.
inline bool sanitized() {
  const char* v = std::getenv("POOLS_SANITIZED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}
inline std::size_t scaled(std::size_t n, std::size_t divisor = 10) {
  return sanitized() ? n / divisor : n;
}

/// Spins until pred() or `limit` passes; returns pred(). For waiting on *another thread*, never
/// as a way to order fibers (tests use latches and channels for that).
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

/// An exception type with a payload, to check that the very object thrown in a fiber arrives.
struct custom_error : std::runtime_error {
  explicit custom_error(int c) : std::runtime_error("custom " + std::to_string(c)), code(c) {}
  int code;
};

/// std::this_thread::get_id() is pthread_self(), which glibc declares __attribute__((const)): the
/// compiler may call it once and reuse the result across a suspension point, after which the
/// fiber may be on another thread. Out of line, with a barrier, it is read afresh.
[[gnu::noinline]] inline std::thread::id thread_id_now() {
  asm volatile("" ::: "memory");
  return std::this_thread::get_id();
}

/// fib(n) by spawn and join, one fiber per call: on either pool (thread_pool, textbook_pool).
template <class Pool>
std::uint64_t fib(Pool& pool, int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  auto a = pool.spawn([&pool, n] { return fib(pool, n - 1); });
  const std::uint64_t b = fib(pool, n - 2);
  return a.join() + b;
}

/// Installs a handler that counts reported exceptions with a given message, for one scope.
class reported_exceptions {
 public:
  explicit reported_exceptions(std::string message) {
    expected() = std::move(message);
    count() = 0;
    previous_ = pools::set_unhandled_exception_handler(&handler);
  }
  ~reported_exceptions() { pools::set_unhandled_exception_handler(previous_); }
  int seen() const { return count().load(); }

 private:
  static std::string& expected() {
    static std::string s;
    return s;
  }
  static std::atomic<int>& count() {
    static std::atomic<int> c{0};
    return c;
  }
  static void handler(std::exception_ptr e) noexcept {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      if (expected() == ex.what()) count().fetch_add(1);
    } catch (...) {
      // Not counted, but not lost either: said on stderr, as the default handler would.
      std::fputs(
          "fibers_test::reported_exceptions: a reported exception that is not a std::exception (not "
          "counted)\n",
          stderr);
    }
  }
  pools::unhandled_exception_handler previous_;
};

}  // namespace fibers_test
