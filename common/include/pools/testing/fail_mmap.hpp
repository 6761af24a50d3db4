// SPDX-License-Identifier: MIT
// pools/testing/fail_mmap.hpp — make the n-th mmap from now fail, for the fault tests of the
// fiber pools, whose stacks are mapped memory (variants/fibers/src/stack_pool.cpp).
//
//   {
//     pools::testing::fail_mmap armed(n);  // the n-th mmap from here returns MAP_FAILED, ENOMEM
//     pool.spawn(task).join();             // a worker maps a slab of stacks for the fiber
//   }
//
// How: common/testing/fail_mmap.cpp defines mmap in the test binary, as fail_thread_start.cpp
// does pthread_create: the dynamic linker binds the program's calls to it first; it counts down
// and forwards to the next definition (dlsym(RTLD_NEXT): libc's, or a sanitizer's interceptor).
// Only calls made through the symbol are seen: the stack pool's. glibc's own maps (malloc's large
// blocks, thread stacks) and the sanitizers' use internal entry points, so they are not counted.
// Every thread's calls count (stacks are mapped by the workers, where no caller waits); the
// failure is one-shot, like fail_allocation's. Not nestable.
#pragma once

#include <cstdint>

namespace pools::testing {

class fail_mmap {
 public:
  explicit fail_mmap(std::uint64_t n) noexcept;
  ~fail_mmap();
  fail_mmap(const fail_mmap&) = delete;
  fail_mmap& operator=(const fail_mmap&) = delete;

  /// True once the armed failure has been injected.
  bool fired() const noexcept;

 private:
  std::uint64_t failures_before_;
};

/// mmap failures injected so far in this process.
std::uint64_t injected_mmap_failures() noexcept;

}  // namespace pools::testing
