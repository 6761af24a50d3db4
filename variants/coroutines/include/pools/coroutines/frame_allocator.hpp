// pools/coroutines/frame_allocator.hpp — where coroutine frames come from: per-thread free lists.
//
// Every call of a coroutine allocates its frame (the compiler may elide it only when the caller
// provably outlives the callee, which a task handed to another thread never does). fib(30) with
// one task per call allocates 2.7 million frames; through malloc that is about a third of the run
// time (measured: README, "Frame allocation"). Frames of one coroutine all have the same size,
// so a free list per size class and per thread serves them with a pointer pop and push:
//
//   allocate(n): class = ceil(n / 64); pop this thread's list for that class, else ::operator new
//   release(p, n): push onto *this* thread's list (the freeing thread need not be the allocating
//                  one: frames migrate with stolen work), unless the list already holds
//                  `cache_limit` frames, then ::operator delete
//
// No atomics: each list belongs to one thread. The cap bounds what a producer/consumer pattern
// (allocate on A, free on B, forever) can strand on B. A thread's lists are freed when it exits.
// Frames larger than `largest_cached` bytes always go to the general allocator.
//
// Under AddressSanitizer the cache is off, so ASan sees every frame's malloc and free and would
// report a double destroy or a use after free of a frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

namespace pools::coroutines {

struct frame_allocator {
  static constexpr std::size_t granule = 64;
  static constexpr std::size_t classes = 16;  // 64, 128, ... 1024 bytes
  static constexpr std::size_t largest_cached = granule * classes;
  static constexpr std::uint32_t cache_limit = 4096;  // frames per class and thread

#if defined(POOLS_ASAN)
  static constexpr bool enabled = false;
#else
  static constexpr bool enabled = true;
#endif

  static void* allocate(std::size_t size);
  static void release(void* frame, std::size_t size) noexcept;

  /// Frees the calling thread's cached frames now (also done automatically at thread exit).
  static void trim_this_thread() noexcept;

  /// Switches the cache off for the rest of the process: every frame then comes from and goes
  /// back to the general allocator (the bench's POOLS_FRAME_CACHE=off, to measure what the cache
  /// buys). A thread's cache is armed by the first frame it frees, and only that first release
  /// reads the switch, so the fast paths above do not change; call it at start-up, before any
  /// coroutine has finished, or threads that already cache keep doing so.
  static void disable_caching() noexcept;

  /// The calling thread's counters since it started (for tests and the bench).
  struct stats {
    std::uint64_t cache_hits = 0;      // allocations served from the free list
    std::uint64_t general_allocs = 0;  // allocations that went to ::operator new
  };
  static stats this_thread_stats() noexcept;
};

namespace detail {

struct frame_node {
  frame_node* next;
};

// Plain data with constant initialisation, so `constinit thread_local` needs no guard on access.
struct frame_cache {
  frame_node* head[frame_allocator::classes];
  std::uint32_t count[frame_allocator::classes];
  std::uint64_t hits;
  std::uint64_t misses;
  bool registered;  // the thread-exit cleanup is armed
  bool dead;        // the thread is exiting: no more caching
};

extern constinit thread_local frame_cache tl_frame_cache;

void* frame_allocate_slow(std::size_t size);
void frame_release_slow(void* frame, std::size_t size) noexcept;

}  // namespace detail

inline void* frame_allocator::allocate(std::size_t size) {
  if constexpr (enabled) {
    if (size <= largest_cached) {
      auto& cache = detail::tl_frame_cache;
      const std::size_t k = (size - 1) / granule;
      if (detail::frame_node* n = cache.head[k]) {
        cache.head[k] = n->next;
        --cache.count[k];
        ++cache.hits;
        return n;
      }
    }
  }
  return detail::frame_allocate_slow(size);
}

inline void frame_allocator::release(void* frame, std::size_t size) noexcept {
  if constexpr (enabled) {
    auto& cache = detail::tl_frame_cache;
    if (size <= largest_cached && cache.registered) {
      const std::size_t k = (size - 1) / granule;
      if (cache.count[k] < cache_limit) {
        auto* n = static_cast<detail::frame_node*>(frame);
        n->next = cache.head[k];
        cache.head[k] = n;
        ++cache.count[k];
        return;
      }
    }
  }
  detail::frame_release_slow(frame, size);
}

/// Mixed into every promise type of this library: frames come from frame_allocator.
struct recycled_frame {
  static void* operator new(std::size_t size) { return frame_allocator::allocate(size); }
  static void operator delete(void* frame, std::size_t size) noexcept {
    frame_allocator::release(frame, size);
  }
};

}  // namespace pools::coroutines
