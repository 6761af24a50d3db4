// SPDX-License-Identifier: MIT
#include <pools/server/job.hpp>
#include <pools/server/work.hpp>

#include <thread>

namespace pools::server {

void busy_wait(std::chrono::nanoseconds d) noexcept {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

std::uint64_t fib_serial(std::uint64_t n) noexcept {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

std::uint64_t run_blocking(const job& j) {
  switch (j.what) {
    case job::kind::fib:
      return fib_serial(j.arg);
    case job::kind::busy:
      busy_wait(j.duration());
      return 0;
    case job::kind::sleep:
      std::this_thread::sleep_for(j.duration());
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
