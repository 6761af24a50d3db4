// SPDX-License-Identifier: MIT
#include <pools/server/job.hpp>
#include <pools/server/work.hpp>

#include <condition_variable>
#include <mutex>

namespace pools::server {

void busy_wait(std::chrono::nanoseconds d) noexcept {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

bool busy_wait(std::chrono::nanoseconds d, const std::stop_token& stop) noexcept {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
    if (stop.stop_requested()) return false;  // one atomic load per turn, beside now()
  }
  return true;
}

bool blocking_sleep(std::chrono::nanoseconds d, const std::stop_token& stop) {
  // C++20's stop-aware wait: it registers a stop callback that notifies the condition variable,
  // so request_stop() on another thread wakes this one at once. Nothing else notifies it: the
  // predicate only says "not stopped yet".
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, d, [] { return false; });
  return !stop.stop_requested();
}

std::uint64_t fib_serial(std::uint64_t n) noexcept {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

std::uint64_t run_blocking(const job& j) {
  switch (j.what) {
    case job::kind::fib:
      return fib_serial(j.arg);
    case job::kind::busy:
      busy_wait(j.duration(), j.stop);
      return 0;
    case job::kind::sleep:
      blocking_sleep(j.duration(), j.stop);
      return 0;
    case job::kind::respond:
      return 0;
  }
  return 0;
}

std::uint64_t fib_expected(std::uint64_t n) noexcept {
  std::uint64_t a = 0, b = 1;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

std::string_view to_string(job::kind k) noexcept {
  switch (k) {
    case job::kind::fib:
      return "fib";
    case job::kind::busy:
      return "busy";
    case job::kind::sleep:
      return "sleep";
    case job::kind::respond:
      return "respond";
  }
  return "?";
}

}  // namespace pools::server
