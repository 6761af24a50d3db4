// SPDX-License-Identifier: MIT
// Helpers shared by the futures pool's tests.
#pragma once

#include <pools/unhandled_exception.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>

namespace futures_test {

using namespace std::chrono_literals;

/// Bound for every wait that must succeed: a broken pool fails the check instead of hanging.
inline constexpr auto patience = 30s;

/// Stress loops run n times normally, n/10 under the sanitizers (POOLS_SANITIZED=1).
inline std::size_t scaled(std::size_t n) {
  const char* v = std::getenv("POOLS_SANITIZED");
  const bool sanitized = v != nullptr && std::string_view(v) == "1";
  return sanitized ? std::max<std::size_t>(n / 10, 1) : n;
}

/// Installs a handler that counts reported exceptions with a given message, for one scope.
class reported_exceptions {
 public:
  reported_exceptions() : previous_(pools::set_unhandled_exception_handler(&count)) { counter() = 0; }
  ~reported_exceptions() { pools::set_unhandled_exception_handler(previous_); }
  reported_exceptions(const reported_exceptions&) = delete;
  reported_exceptions& operator=(const reported_exceptions&) = delete;
  int value() const { return counter().load(); }

 private:
  static std::atomic<int>& counter() {
    static std::atomic<int> c{0};
    return c;
  }
  static void count(std::exception_ptr e) noexcept {
    try {
      std::rethrow_exception(e);
    } catch (const std::runtime_error& ex) {
      if (std::string(ex.what()).starts_with("expected:")) counter().fetch_add(1);
    } catch (...) {
      // Not counted, but not lost either: said on stderr, as the default handler would.
      std::fputs(
          "futures_test::reported_exceptions: a reported exception that is not a std::runtime_error (not "
          "counted)\n",
          stderr);
    }
  }
  pools::unhandled_exception_handler previous_;
};

}  // namespace futures_test
