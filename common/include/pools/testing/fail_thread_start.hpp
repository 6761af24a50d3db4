// SPDX-License-Identifier: MIT
// pools/testing/fail_thread_start.hpp — make the n-th thread start from now fail, and count the
// threads started and joined, for the fault tests of every pool.
//
//   {
//     pools::testing::fail_thread_start armed(n);  // the n-th pthread_create from here fails
//     CHECK_THROWS_AS(Pool(threads), std::system_error);
//   }
//
// How: common/testing/fail_thread_start.cpp defines pthread_create and pthread_join in the
// test binary. The dynamic linker binds every call (std::thread's included, from libstdc++) to
// the executable's definition first; it counts, and then calls the next definition in lookup
// order, found with dlsym(RTLD_NEXT): libc's, or under ASan/TSan the sanitizer's interceptor,
// which then calls libc's. The armed failure returns EAGAIN, what glibc returns when the thread
// limit (RLIMIT_NPROC) or memory for the stack runs out; std::thread turns it into
// std::system_error. A test-only seam rather than a real RLIMIT_NPROC: CI runs as root, for
// whom the kernel does not enforce that limit.
#pragma once

#include <cstdint>

namespace pools::testing {

/// Arms, for the lifetime of the object, a failure of the n-th pthread_create (n >= 1) of any
/// thread. One-shot: the starts after it succeed. Not nestable.
class fail_thread_start {
 public:
  explicit fail_thread_start(std::uint64_t n) noexcept;
  ~fail_thread_start();
  fail_thread_start(const fail_thread_start&) = delete;
  fail_thread_start& operator=(const fail_thread_start&) = delete;

  /// True once the armed failure has been injected.
  bool fired() const noexcept;

 private:
  std::uint64_t failures_before_;
};

/// Threads started (pthread_create succeeded) and joined (pthread_join succeeded) by this process
/// since it began, counted by the interposed functions.
std::uint64_t threads_started() noexcept;
std::uint64_t threads_joined() noexcept;

}  // namespace pools::testing
