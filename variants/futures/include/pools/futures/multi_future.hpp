// SPDX-License-Identifier: MIT
// pools/futures/multi_future.hpp — the futures of one submit_loop / submit_blocks /
// submit_sequence call, waited for and collected together (BS::multi_future).
//
// It is a std::vector<std::future<T>>, so it can also be filled by hand and iterated. One
// difference from BS::thread_pool: get() waits for *every* future before it rethrows the first
// exception (in index order). BS rethrows at the first failed future while later blocks may
// still be running and using what the loop body captured by reference; here, once get()
// returns or throws, no task of the batch is running any more.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools::futures {

template <class T>
class multi_future : public std::vector<std::future<T>> {
  // std::vector cannot hold references; a T& result is collected as a reference_wrapper.
  using value_type_t =
      std::conditional_t<std::is_reference_v<T>, std::reference_wrapper<std::remove_reference_t<T>>,
                         std::remove_cv_t<T>>;

 public:
  using std::vector<std::future<T>>::vector;
  multi_future() = default;

  /// Waits for all, then returns the results in order (void for multi_future<void>). If any
  /// task threw, rethrows the first such exception instead. Each future is consumed, so
  /// valid() is false afterwards.
  [[nodiscard]] std::conditional_t<std::is_void_v<T>, void, std::vector<value_type_t>> get() {
    wait();
    std::exception_ptr first_error;
    if constexpr (std::is_void_v<T>) {
      for (auto& f : *this) collect([&] { f.get(); }, first_error);
      if (first_error) std::rethrow_exception(first_error);
    } else {
      std::vector<value_type_t> results;
      results.reserve(this->size());
      for (auto& f : *this) collect([&] { results.push_back(f.get()); }, first_error);
      if (first_error) std::rethrow_exception(first_error);
      return results;
    }
  }

  /// How many futures are ready now.
  std::size_t ready_count() const {
    std::size_t ready = 0;
    for (const auto& f : *this) {
      if (f.wait_for(std::chrono::seconds(0)) == std::future_status::ready) ++ready;
    }
    return ready;
  }

  /// True when every future has a shared state (none was consumed by get() or default-made).
  bool valid() const noexcept {
    for (const auto& f : *this) {
      if (!f.valid()) return false;
    }
    return true;
  }

  /// Blocks until every future is ready.
  void wait() const {
    for (const auto& f : *this) f.wait();
  }

  /// Blocks until every future is ready or `timeout` has passed; true when all are ready.
  template <class Rep, class Period>
  bool wait_for(const std::chrono::duration<Rep, Period>& timeout) const {
    return wait_until(std::chrono::steady_clock::now() + timeout);
  }

  /// Blocks until every future is ready or `deadline`; true when all are ready.
  template <class Clock, class Duration>
  bool wait_until(const std::chrono::time_point<Clock, Duration>& deadline) const {
    for (const auto& f : *this) {
      if (f.wait_until(deadline) == std::future_status::timeout) return false;
    }
    return true;
  }

 private:
  template <class F>
  static void collect(F&& step, std::exception_ptr& first_error) {
    try {
      step();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
};

}  // namespace pools::futures
