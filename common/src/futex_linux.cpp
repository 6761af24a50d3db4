// SPDX-License-Identifier: MIT
// The Linux futex behind pools/futex.hpp (the default build on Linux).
#include <pools/futex.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace pools {

namespace {
// The kernel reads the word as a plain int; std::atomic<uint32_t> has that representation
// (static_assert in the header).
std::uint32_t* address(std::atomic<std::uint32_t>& word) noexcept {
  return reinterpret_cast<std::uint32_t*>(&word);
}
}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                std::chrono::nanoseconds timeout) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout.count() >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
    tsp = &ts;
  }
  // Relative timeout on CLOCK_MONOTONIC, which is what std::chrono::steady_clock reads on Linux.
  // EINTR, EAGAIN (value changed) and ETIMEDOUT all mean "re-check": the result is not needed.
  (void)syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept {
  (void)syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace pools
