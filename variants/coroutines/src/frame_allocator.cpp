// SPDX-License-Identifier: MIT
#include <pools/coroutines/frame_allocator.hpp>
#include <pools/spinlock.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>  // std::lock_guard
#include <new>
#include <utility>

namespace pools::coroutines {
namespace detail {

constinit thread_local frame_cache tl_frame_cache{};

namespace {
// frame_allocator::disable_caching(). relaxed: a start-up setting, read by arm() (slow paths).
std::atomic<bool> caching_disabled{false};
}  // namespace

namespace {

// Sizes are rounded up to the class size, so a frame can be reused by any coroutine of its class.
std::size_t rounded(std::size_t size) noexcept {
  return size <= frame_allocator::largest_cached
             ? ((size + frame_allocator::granule - 1) / frame_allocator::granule) * frame_allocator::granule
             : size;
}

void free_list(frame_node* n) noexcept {
  while (n != nullptr) ::operator delete(static_cast<void*>(std::exchange(n, n->next)));
}

void free_all(frame_cache& cache) noexcept {
  for (std::size_t k = 0; k < frame_allocator::classes; ++k) {
    free_list(std::exchange(cache.head[k], nullptr));
    free_list(std::exchange(cache.spill[k], nullptr));
    cache.count[k] = 0;
    cache.spill_count[k] = 0;
  }
}

// The transfer cache: per size class, up to depot_batches lists of exactly batch_size frames.
// A spin lock per class: it is taken once per batch_size frames, for a few stores, and the lock
// orders the frames' links (written by the giving thread) before the taker reads them. Each class
// on its own cache line, so threads moving batches of different sizes do not meet.
struct alignas(64) depot_class {
  pools::spinlock lock;
  std::uint32_t size = 0;  // batches held; guarded by lock
  frame_node* batches[frame_allocator::depot_batches] = {};
};
constinit depot_class depot[frame_allocator::classes];

// The one object with a destructor: constructed on a thread's first release or miss (in arm()),
// destroyed at that thread's exit. It stops caching first, so frames freed by later
// thread_local destructors go straight to the general allocator instead of into a list nobody
// would free.
struct cache_reaper {
  ~cache_reaper() {
    tl_frame_cache.dead = true;
    tl_frame_cache.registered = false;
    free_all(tl_frame_cache);
  }
};

// May this thread keep frames in its lists? Arms the thread-exit cleanup on the first yes.
bool arm(frame_cache& cache) noexcept {
  if (cache.registered) return true;
  if (cache.dead || caching_disabled.load(std::memory_order_relaxed)) return false;
  thread_local cache_reaper reaper;  // first use on this thread arms the cleanup
  (void)reaper;
  cache.registered = true;
  return true;
}

// Pops one batch of class k from the transfer cache, or nullptr.
frame_node* take_batch(std::size_t k) noexcept {
  depot_class& d = depot[k];
  const std::lock_guard lock(d.lock);
  return d.size == 0 ? nullptr : std::exchange(d.batches[--d.size], nullptr);
}

}  // namespace

void* frame_allocate_slow(std::size_t size) {
  if constexpr (frame_allocator::enabled) {
    frame_cache& cache = tl_frame_cache;
    if (size <= frame_allocator::largest_cached) {
      const std::size_t k = (size - 1) / frame_allocator::granule;
      // The list is empty. Frames this thread spilled come first, then a batch another thread
      // gave: either becomes the list, and its first frame is the one returned.
      frame_node* list = nullptr;
      std::uint32_t n = 0;
      if (cache.spill[k] != nullptr) {
        list = std::exchange(cache.spill[k], nullptr);
        n = std::exchange(cache.spill_count[k], 0);
      } else if (arm(cache)) {
        list = take_batch(k);
        n = frame_allocator::batch_size;
        if (list != nullptr) ++cache.taken;
      }
      if (list != nullptr) {
        cache.head[k] = list->next;
        cache.count[k] = n - 1;
        ++cache.hits;
        return list;
      }
    }
    ++cache.misses;
  }
  return ::operator new(rounded(size));
}

void frame_release_slow(void* frame, std::size_t size) noexcept {
  if constexpr (frame_allocator::enabled) {
    if (size <= frame_allocator::largest_cached && arm(tl_frame_cache)) {
      frame_allocator::release(frame, size);  // now cached
      return;
    }
  }
  ::operator delete(frame);
}

void frame_give_batch(frame_cache& cache, std::size_t k) noexcept {
  frame_node* batch = std::exchange(cache.spill[k], nullptr);
  cache.spill_count[k] = 0;
  {
    depot_class& d = depot[k];
    const std::lock_guard lock(d.lock);
    if (d.size < frame_allocator::depot_batches) {
      d.batches[d.size++] = batch;
      ++cache.given;
      return;
    }
  }
  free_list(batch);  // the transfer cache is full: back to the general allocator
}

}  // namespace detail

void frame_allocator::disable_caching() noexcept {
  detail::caching_disabled.store(true, std::memory_order_relaxed);
}

void frame_allocator::trim_this_thread() noexcept {
  detail::free_all(detail::tl_frame_cache);
}

void frame_allocator::trim_transfer_cache() noexcept {
  for (detail::depot_class& d : detail::depot) {
    for (;;) {
      detail::frame_node* batch = nullptr;
      {
        const std::lock_guard lock(d.lock);
        if (d.size == 0) break;
        batch = std::exchange(d.batches[--d.size], nullptr);
      }
      detail::free_list(batch);  // outside the lock: the general allocator may take its time
    }
  }
}

frame_allocator::stats frame_allocator::this_thread_stats() noexcept {
  const detail::frame_cache& c = detail::tl_frame_cache;
  return {c.hits, c.misses, c.taken, c.given};
}

}  // namespace pools::coroutines
