// SPDX-License-Identifier: MIT
// The interposed pthread_create/pthread_join of the fault test binaries
// (pools/testing/fail_thread_start.hpp explains the mechanism).
#include <pools/testing/fail_thread_start.hpp>

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "shared_countdown.hpp"

namespace pools::testing {

namespace {

using create_fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using join_fn = int (*)(pthread_t, void**);

// The next definitions in lookup order: libc's, or a sanitizer's interceptor in front of it.
template <class F>
F next_definition(const char* name) {
  void* f = ::dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "fail_thread_start: dlsym(RTLD_NEXT, %s) found nothing\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

constinit detail::shared_countdown g_countdown;
// relaxed: counters; a test reads them after joining, which orders them.
constinit std::atomic<std::uint64_t> g_started{0};
constinit std::atomic<std::uint64_t> g_joined{0};

}  // namespace

fail_thread_start::fail_thread_start(std::uint64_t n) noexcept : failures_before_(g_countdown.failures()) {
  g_countdown.arm(n);
}

fail_thread_start::~fail_thread_start() {
  g_countdown.disarm();
}

bool fail_thread_start::fired() const noexcept {
  return g_countdown.failures() != failures_before_;
}

std::uint64_t threads_started() noexcept {
  return g_started.load(std::memory_order_relaxed);
}

std::uint64_t threads_joined() noexcept {
  return g_joined.load(std::memory_order_relaxed);
}

}  // namespace pools::testing

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  namespace pt = pools::testing;
  static const auto real = pt::next_definition<pt::create_fn>("pthread_create");
  if (pt::g_countdown.tick()) return EAGAIN;
  const int r = real(thread, attr, start, arg);
  if (r == 0) pt::g_started.fetch_add(1, std::memory_order_relaxed);
  return r;
}

extern "C" int pthread_join(pthread_t thread, void** result) {
  namespace pt = pools::testing;
  static const auto real = pt::next_definition<pt::join_fn>("pthread_join");
  const int r = real(thread, result);
  if (r == 0) pt::g_joined.fetch_add(1, std::memory_order_relaxed);
  return r;
}
