// SPDX-License-Identifier: MIT
// Helpers shared by the reactor's tests.
#pragma once

#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace reactor_test {

/// While alive, counts reported exceptions whose message is `boom` (others are not counted).
class exception_counter {
 public:
  exception_counter() : previous_(pools::set_unhandled_exception_handler(&count)) { hits().store(0); }
  ~exception_counter() { pools::set_unhandled_exception_handler(previous_); }
  exception_counter(const exception_counter&) = delete;
  exception_counter& operator=(const exception_counter&) = delete;
  int reported() const { return hits().load(); }

 private:
  static std::atomic<int>& hits() {
    static std::atomic<int> n{0};
    return n;
  }
  static void count(std::exception_ptr e) noexcept {
    try {
      std::rethrow_exception(e);
    } catch (const std::runtime_error& ex) {
      if (std::string(ex.what()) == "boom") hits().fetch_add(1);
    } catch (...) {
      // Not counted, but not lost either: said on stderr, as the default handler would.
      std::fputs(
          "reactor_test::exception_counter: a reported exception that is not a std::runtime_error (not "
          "counted)\n",
          stderr);
    }
  }
  pools::unhandled_exception_handler previous_;
};

/// Polls `done` until it holds or `timeout` passes. For waiting on an outcome that has no
/// event to block on (an object count reaching zero); never for ordering.
template <class Pred>
bool wait_until(Pred done, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

/// Stress sizes shrink (never to zero) under sanitizers: POOLS_SANITIZED=1.
inline int scaled(int n) {
  const char* s = std::getenv("POOLS_SANITIZED");
  return s != nullptr && std::strcmp(s, "1") == 0 ? (n / 10 > 0 ? n / 10 : 1) : n;
}

}  // namespace reactor_test
