// SPDX-License-Identifier: MIT
// The replaced global operator new/delete of the fault test binaries (pools/testing/fail_alloc.hpp).
//
// Every allocating overload goes through allocate(), which asks should_fail() first. The blocks
// come from malloc/aligned_alloc and go back with free, so AddressSanitizer's LeakSanitizer,
// which intercepts malloc, still reports every block the program leaks.
#include <pools/testing/fail_alloc.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "shared_countdown.hpp"

namespace pools::testing {

namespace {

// The this_thread countdown: 0 = disarmed, else the allocations left before the failing one.
constinit thread_local std::uint64_t tl_countdown = 0;
constinit detail::shared_countdown g_countdown;  // the any_thread one; counts both scopes' failures
// relaxed: a statistic.
constinit std::atomic<std::uint64_t> g_allocations{0};

bool should_fail() noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (tl_countdown != 0) return --tl_countdown == 0 && g_countdown.fail();
  return g_countdown.tick();
}

void* allocate(std::size_t size, std::size_t alignment) noexcept {
  if (should_fail()) return nullptr;
  if (size == 0) size = 1;
  if (alignment <= alignof(std::max_align_t)) return std::malloc(size);
  // aligned_alloc wants a size that is a multiple of the alignment.
  return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
}

void* allocate_or_throw(std::size_t size, std::size_t alignment) {
  void* p = allocate(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

fail_allocation::fail_allocation(std::uint64_t k, alloc_scope scope) noexcept
    : scope_(scope), failures_before_(g_countdown.failures()) {
  if (scope == alloc_scope::this_thread)
    tl_countdown = k;
  else
    g_countdown.arm(k);
}

fail_allocation::~fail_allocation() {
  if (scope_ == alloc_scope::this_thread)
    tl_countdown = 0;
  else
    g_countdown.disarm();
}

bool fail_allocation::fired() const noexcept {
  return g_countdown.failures() != failures_before_;
}

std::uint64_t injected_allocation_failures() noexcept {
  return g_countdown.failures();
}

std::uint64_t allocations() noexcept {
  return g_allocations.load(std::memory_order_relaxed);
}

}  // namespace pools::testing

namespace pt = pools::testing;

// The replaceable allocation functions ([new.delete]): every form a program can call.
void* operator new(std::size_t n) {
  return pt::allocate_or_throw(n, alignof(std::max_align_t));
}
void* operator new[](std::size_t n) {
  return pt::allocate_or_throw(n, alignof(std::max_align_t));
}
void* operator new(std::size_t n, std::align_val_t a) {
  return pt::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return pt::allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return pt::allocate(n, alignof(std::max_align_t));
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return pt::allocate(n, alignof(std::max_align_t));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return pt::allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return pt::allocate(n, static_cast<std::size_t>(a));
}

void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
