// SPDX-License-Identifier: MIT
// pools/testing/report_counter.hpp — counts what reaches pools::report_unhandled_exception while
// it lives: a posted task's exception, or an out-of-memory failure a worker had no caller to tell
// (a fiber without a stack, a timer a loop could not file). For the fault tests.
//
//   pools::testing::report_counter reports;   // installs the counting handler
//   ... run the pool ...
//   CHECK(reports.out_of_memory() <= 1);       // the previous handler is back after the scope
#pragma once

#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <cerrno>
#include <exception>
#include <new>
#include <system_error>
#include <utility>

namespace pools::testing {

/// True for what an allocation that failed throws: std::bad_alloc, or std::system_error with
/// ENOMEM (an mmap that failed: the fiber stack pool).
inline bool is_out_of_memory(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return true;
  } catch (const std::system_error& s) {
    return s.code().value() == ENOMEM;
  } catch (...) {
    return false;
  }
}

/// Not nestable (one handler slot per process).
class report_counter {
 public:
  report_counter() : previous_(pools::set_unhandled_exception_handler(&count)) {
    counts().out_of_memory = 0;
    counts().other = 0;
  }
  ~report_counter() { pools::set_unhandled_exception_handler(previous_); }
  report_counter(const report_counter&) = delete;
  report_counter& operator=(const report_counter&) = delete;

  int out_of_memory() const noexcept { return counts().out_of_memory.load(); }
  int other() const noexcept { return counts().other.load(); }

 private:
  struct tally {
    std::atomic<int> out_of_memory{0};
    std::atomic<int> other{0};
  };
  static tally& counts() noexcept {
    static tally t;
    return t;
  }
  static void count(std::exception_ptr e) noexcept {
    (is_out_of_memory(e) ? counts().out_of_memory : counts().other).fetch_add(1);
  }

  pools::unhandled_exception_handler previous_;
};

}  // namespace pools::testing
