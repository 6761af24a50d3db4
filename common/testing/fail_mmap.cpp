// SPDX-License-Identifier: MIT
// The interposed mmap of the fault test binaries (pools/testing/fail_mmap.hpp explains it).
#include <pools/testing/fail_mmap.hpp>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "shared_countdown.hpp"

namespace pools::testing {

namespace {
constinit detail::shared_countdown g_countdown;
}  // namespace

fail_mmap::fail_mmap(std::uint64_t n) noexcept : failures_before_(g_countdown.failures()) {
  g_countdown.arm(n);
}

fail_mmap::~fail_mmap() {
  g_countdown.disarm();
}

bool fail_mmap::fired() const noexcept {
  return g_countdown.failures() != failures_before_;
}

std::uint64_t injected_mmap_failures() noexcept {
  return g_countdown.failures();
}

}  // namespace pools::testing

// Not instrumented by the sanitizers (common/CMakeLists.txt), and with no function-local static
// (whose guard TSan intercepts): TSan's own start-up calls mmap (its symbolizer's allocator) before
// its runtime can run instrumented code. The pointer is looked up on first use; two threads that
// race to do it store the same value.
extern "C" void* mmap(void* address, std::size_t length, int protection, int flags, int fd, off_t offset) {
  namespace pt = pools::testing;
  using mmap_fn = void* (*)(void*, std::size_t, int, int, int, off_t);
  static constinit std::atomic<mmap_fn> real{nullptr};  // constant-initialized: no guard
  mmap_fn next = real.load(std::memory_order_relaxed);
  if (next == nullptr) {
    void* f = ::dlsym(RTLD_NEXT, "mmap");
    if (f == nullptr) {
      std::fprintf(stderr, "fail_mmap: dlsym(RTLD_NEXT, mmap) found nothing\n");
      std::abort();
    }
    next = reinterpret_cast<mmap_fn>(f);
    real.store(next, std::memory_order_relaxed);
  }
  if (pt::g_countdown.tick()) {
    errno = ENOMEM;  // what the kernel says when the address space or overcommit runs out
    return MAP_FAILED;
  }
  return next(address, length, protection, flags, fd, offset);
}
