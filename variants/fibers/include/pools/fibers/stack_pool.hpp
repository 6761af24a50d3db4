// SPDX-License-Identifier: MIT
// pools/fibers/stack_pool.hpp — where fiber stacks come from: a pooled, slab-mapped allocator.
//
// A fiber's stack is ordinary memory that the stack pointer is moved into. Three decisions:
//
// * Size. `default_stack_size` is 256 KiB. Virtual address space is cheap on a 64-bit machine
//   (100,000 stacks reserve 25 GiB of the 128 TiB a process may address) and the kernel only
//   backs the pages a fiber actually touches, so a suspended fiber that used 2 KiB costs one
//   4 KiB page whatever its size. What the size buys is depth: a fiber here runs the children it
//   joins inline, on its own stack, exactly like a thread does (see README, "run until it
//   blocks"), so the stack must hold the program's recursion. 256 KiB holds about a thousand
//   frames of a few hundred bytes, glibc's stdio (a few KiB) and getaddrinfo (tens of KiB),
//   with room for the 2-3x frame growth of ASan builds. Boost.Context defaults to 128 KiB, marl
//   to 1 MiB, a thread to 8 MiB; Go starts at 8 KiB because it can move and grow stacks, which
//   C++ cannot (pointers into the stack would dangle).
//
// * Guard page. With `guard_page`, the page below each stack is mapped PROT_NONE, so an
//   overflow faults at once instead of silently overwriting the neighbouring stack. Each guard
//   splits the mapping, costing one kernel VMA per stack, and Linux caps VMAs per process
//   (vm.max_map_count, 65,530 by default). So guards are on by default but rationed: the first
//   stacks of the process (up to a quarter of max_map_count) get one, the rest are mapped without.
//   `stats().guarded` says how many have one.
//
// * Pooling. Stacks are carved from slabs of 16 (one mmap per slab, not per stack: fewer
//   system calls and fewer VMAs) and a released stack goes back to a free list, never to the
//   kernel, until the pool is destroyed. A fiber that is created after another ended reuses its
//   warm, already-mapped pages. The memory is returned when the thread_pool is destroyed.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace pools::fibers {

inline constexpr std::size_t default_stack_size = 256 * 1024;

struct stack_options {
  /// Usable bytes per stack, rounded up to whole pages. 16 KiB .. 1 GiB.
  std::size_t size = default_stack_size;
  /// Whether to put an inaccessible page below each stack (while the process-wide budget lasts).
  bool guard_page = true;
};

class stack_pool {
 public:
  struct stack {
    std::byte* base = nullptr;  // lowest usable address; the stack grows down towards it
    std::size_t size = 0;       // usable bytes
    bool guarded = false;
  };

  struct statistics {
    std::size_t mapped = 0;   // stacks carved from slabs so far
    std::size_t in_use = 0;   // handed out and not yet returned
    std::size_t guarded = 0;  // mapped stacks with a guard page
  };

  /// Throws std::invalid_argument for a size outside 16 KiB .. 1 GiB.
  explicit stack_pool(const stack_options& options = {});
  ~stack_pool();  // unmaps every slab; every stack must have been returned
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  /// A stack from the free list, or from a new slab. Throws std::system_error (ENOMEM, ...) if
  /// mmap fails, std::bad_alloc if the pool's bookkeeping cannot grow; either way nothing changed.
  /// (The thread_pool's worker then ends the task that asked for the stack with that error.)
  stack allocate();
  /// Returns a stack to the free list. Thread-safe, as is allocate().
  void deallocate(const stack& s) noexcept;

  std::size_t stack_size() const noexcept { return size_; }
  statistics stats() const;

  /// How many stacks of the whole process may still get a guard page.
  static std::size_t guard_budget_left() noexcept;

 private:
  struct slab {
    void* address;
    std::size_t bytes;
  };
  void map_slab();  // requires mutex_

  std::size_t size_;
  bool guard_;
  std::size_t page_;
  mutable std::mutex mutex_;
  std::vector<stack> free_;
  std::vector<slab> slabs_;
  statistics stats_;
};

}  // namespace pools::fibers
