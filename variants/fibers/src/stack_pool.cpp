// SPDX-License-Identifier: MIT
// src/stack_pool.cpp — slab-mapped, pooled, optionally guarded fiber stacks (see stack_pool.hpp).
#include <pools/fibers/stack_pool.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace pools::fibers {

namespace {

constexpr std::size_t min_stack = 16 * 1024;
constexpr std::size_t max_stack = std::size_t{1} << 30;
constexpr std::size_t stacks_per_slab = 16;

// MAP_NORESERVE: the kernel commits a page only when a fiber touches it, so a deep but unused
// stack costs address space, not memory (and is not counted against overcommit). MAP_STACK: a
// hint that this is a stack. Both are Linux's, not POSIX's (FreeBSD's MAP_STACK even means a
// region that grows down): the portable build (POOLS_PORTABLE) maps plain anonymous memory, which
// other systems commit lazily too.
#if defined(__linux__) && !defined(POOLS_PORTABLE)
constexpr int stack_map_flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK;
#else
constexpr int stack_map_flags = MAP_PRIVATE | MAP_ANONYMOUS;
#endif

// Each guarded stack costs about two kernel VMAs (the guard splits the mapping). Leave three
// quarters of the process's VMA limit to everything else (the heap, libraries, thread stacks,
// sanitizer shadow), so guards never make an unrelated mmap fail.
std::atomic<std::ptrdiff_t>& guard_budget() {
  static std::atomic<std::ptrdiff_t> budget = [] {
    std::ptrdiff_t max_map_count = 65530;
    std::ifstream in("/proc/sys/vm/max_map_count");
    in >> max_map_count;
    return std::atomic<std::ptrdiff_t>(std::max<std::ptrdiff_t>(max_map_count / 4, 0));
  }();
  return budget;
}

bool take_guard_budget(std::size_t n) {
  auto& budget = guard_budget();
  auto left = budget.load(std::memory_order_relaxed);
  const auto want = static_cast<std::ptrdiff_t>(n);
  while (left >= want) {
    if (budget.compare_exchange_weak(left, left - want, std::memory_order_relaxed)) return true;
  }
  return false;
}

void give_guard_budget(std::size_t n) {
  guard_budget().fetch_add(static_cast<std::ptrdiff_t>(n), std::memory_order_relaxed);
}

}  // namespace

stack_pool::stack_pool(const stack_options& options)
    : guard_(options.guard_page), page_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
  if (options.size < min_stack || options.size > max_stack) {
    throw std::invalid_argument("pools::fibers::stack_options: stack size " + std::to_string(options.size) +
                                " is out of range " + std::to_string(min_stack) + " .. " +
                                std::to_string(max_stack) + " bytes");
  }
  size_ = (options.size + page_ - 1) / page_ * page_;
}

stack_pool::~stack_pool() {
  for (const slab& s : slabs_) ::munmap(s.address, s.bytes);
  give_guard_budget(stats_.guarded);
}

void stack_pool::map_slab() {
  // Room first, for the slab and for every stack ever mapped (so that deallocate(), noexcept,
  // never reallocates): if the heap fails, it fails here, before a mapping could be lost.
  slabs_.reserve(slabs_.size() + 1);
  free_.reserve(stats_.mapped + stacks_per_slab);
  const bool guarded = guard_ && take_guard_budget(stacks_per_slab);
  const std::size_t stride = size_ + (guarded ? page_ : 0);
  const std::size_t bytes = stride * stacks_per_slab;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, stack_map_flags, -1, 0);
  if (p == MAP_FAILED) {
    const int error = errno;
    if (guarded) give_guard_budget(stacks_per_slab);
    throw std::system_error(error, std::generic_category(),
                            "pools::fibers::stack_pool: mmap of a stack slab failed");
  }
  slabs_.push_back({p, bytes});  // cannot throw now: reserved above
  std::size_t guards = 0;
  // Reverse order so that allocate(), which pops from the back, hands out the lowest stack first.
  for (std::size_t i = stacks_per_slab; i-- > 0;) {
    auto* low = static_cast<std::byte*>(p) + i * stride;
    bool has_guard = false;
    if (guarded) has_guard = ::mprotect(low, page_, PROT_NONE) == 0;  // below the stack: it grows down
    guards += has_guard ? 1 : 0;
    free_.push_back({low + (guarded ? page_ : 0), size_, has_guard});
  }
  if (guarded) give_guard_budget(stacks_per_slab - guards);
  stats_.mapped += stacks_per_slab;
  stats_.guarded += guards;
}

stack_pool::stack stack_pool::allocate() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) map_slab();
  const stack s = free_.back();
  free_.pop_back();
  ++stats_.in_use;
  return s;
}

void stack_pool::deallocate(const stack& s) noexcept {
  std::lock_guard lock(mutex_);
  free_.push_back(s);  // cannot throw: map_slab() reserved room for every stack
  --stats_.in_use;
}

stack_pool::statistics stack_pool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::size_t stack_pool::guard_budget_left() noexcept {
  return static_cast<std::size_t>(
      std::max<std::ptrdiff_t>(guard_budget().load(std::memory_order_relaxed), 0));
}

}  // namespace pools::fibers
