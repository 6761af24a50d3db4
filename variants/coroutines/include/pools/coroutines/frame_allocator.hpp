// SPDX-License-Identifier: MIT
// pools/coroutines/frame_allocator.hpp — where coroutine frames come from: per-thread free lists,
// and a central transfer cache between threads.
//
// Every call of a coroutine allocates its frame (the compiler may elide it only when the caller
// provably outlives the callee, which a task handed to another thread never does). fib(30) with
// one task per call allocates 2.7 million frames; through malloc that is about a third of the run
// time (measured: docs/results/history/coroutines.md). Frames of one coroutine all have the same size,
// so a free list per size class and per thread serves them with a pointer pop and push:
//
//   allocate(n): class = ceil(n / 64); pop this thread's list for that class, else take a batch
//                from the transfer cache, else ::operator new
//   release(p, n): push onto *this* thread's list (the freeing thread need not be the allocating
//                  one: frames migrate with stolen work); once that list holds `cache_limit`
//                  frames, onto a spill list instead, handed to the transfer cache as one batch
//                  of `batch_size` frames
//
//     thread A (posts: allocates)         transfer cache          thread B (runs: frees)
//     list[k] empty ──take one batch──►  [batch][batch]...  ◄──give a batch── spill[k] full
//
// The per-thread lists have no atomics: each belongs to one thread. The transfer cache is what a
// producer/consumer pattern needs (a thread posting from outside a pool allocates every frame, a
// worker frees every one): without it the poster's list stays empty and the worker's overflows,
// and both sides pay the general allocator for every task. It is a small array of whole batches
// per class under a spin lock, taken once per `batch_size` frames (tcmalloc's design: thread
// caches, a transfer cache of batches, the general allocator behind). It holds at most
// `depot_batches` batches per class, so memory stranded there is bounded; its frames live until
// the process exits. A thread's own lists are freed when it exits.
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
  static constexpr std::uint32_t batch_size = 64;     // frames moved per transfer-cache visit
  static constexpr std::uint32_t depot_batches = 32;  // batches per class in the transfer cache

#if defined(POOLS_ASAN)
  static constexpr bool enabled = false;
#else
  static constexpr bool enabled = true;
#endif

  static void* allocate(std::size_t size);
  static void release(void* frame, std::size_t size) noexcept;

  /// Frees the calling thread's cached frames now (also done automatically at thread exit).
  static void trim_this_thread() noexcept;

  /// Frees the frames held in the transfer cache now (otherwise they live until the process
  /// exits, at most `depot_batches` batches per class).
  static void trim_transfer_cache() noexcept;

  /// Switches the cache off for the rest of the process: every frame then comes from and goes
  /// back to the general allocator (the bench's POOLS_FRAME_CACHE=off, to measure what the cache
  /// buys). Only the slow paths read the switch, until a thread's cache is armed by its first
  /// release or first miss, so the fast paths above do not change; call it at start-up, before
  /// any coroutine frame is allocated, or threads that already cache keep doing so.
  static void disable_caching() noexcept;

  /// The calling thread's counters since it started (for tests and the bench).
  struct stats {
    std::uint64_t cache_hits = 0;      // allocations served from the free list
    std::uint64_t general_allocs = 0;  // allocations that went to ::operator new
    std::uint64_t batches_taken = 0;   // batches this thread took from the transfer cache
    std::uint64_t batches_given = 0;   // batches this thread gave to it (not those it refused)
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
  // Frames released while head[k] is full, gathered into the next batch for the transfer cache.
  frame_node* spill[frame_allocator::classes];
  std::uint32_t spill_count[frame_allocator::classes];
  std::uint64_t hits;
  std::uint64_t misses;
  std::uint64_t taken;
  std::uint64_t given;
  bool registered;  // the thread-exit cleanup is armed
  bool dead;        // the thread is exiting: no more caching
};

extern constinit thread_local frame_cache tl_frame_cache;

void* frame_allocate_slow(std::size_t size);
void frame_release_slow(void* frame, std::size_t size) noexcept;
// Hands cache.spill[k] (batch_size frames) to the transfer cache, or frees it if that is full.
void frame_give_batch(frame_cache& cache, std::size_t k) noexcept;

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
      auto* n = static_cast<detail::frame_node*>(frame);
      if (cache.count[k] < cache_limit) {
        n->next = cache.head[k];
        cache.head[k] = n;
        ++cache.count[k];
        return;
      }
      n->next = cache.spill[k];
      cache.spill[k] = n;
      if (++cache.spill_count[k] == batch_size) detail::frame_give_batch(cache, k);
      return;
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
