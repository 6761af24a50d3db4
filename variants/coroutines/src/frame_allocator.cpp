#include <pools/coroutines/frame_allocator.hpp>

#include <atomic>
#include <new>

namespace pools::coroutines {
namespace detail {

constinit thread_local frame_cache tl_frame_cache{};

namespace {
// frame_allocator::disable_caching(). relaxed: a start-up setting, read once per thread.
std::atomic<bool> caching_disabled{false};
}  // namespace

namespace {

// Sizes are rounded up to the class size, so a frame can be reused by any coroutine of its class.
std::size_t rounded(std::size_t size) noexcept {
  return size <= frame_allocator::largest_cached
             ? ((size + frame_allocator::granule - 1) / frame_allocator::granule) * frame_allocator::granule
             : size;
}

void free_all(frame_cache& cache) noexcept {
  for (std::size_t k = 0; k < frame_allocator::classes; ++k) {
    while (frame_node* n = cache.head[k]) {
      cache.head[k] = n->next;
      ::operator delete(static_cast<void*>(n));
    }
    cache.count[k] = 0;
  }
}

// The one object with a destructor: constructed on a thread's first cached release, destroyed at
// that thread's exit. It stops caching first, so frames freed by later thread_local destructors
// go straight to the general allocator instead of into a list nobody would free.
struct cache_reaper {
  ~cache_reaper() {
    tl_frame_cache.dead = true;
    tl_frame_cache.registered = false;
    free_all(tl_frame_cache);
  }
};

}  // namespace

void* frame_allocate_slow(std::size_t size) {
  if constexpr (frame_allocator::enabled) ++tl_frame_cache.misses;
  return ::operator new(rounded(size));
}

void frame_release_slow(void* frame, std::size_t size) noexcept {
  if constexpr (frame_allocator::enabled) {
    frame_cache& cache = tl_frame_cache;
    if (!cache.registered && !cache.dead && size <= frame_allocator::largest_cached &&
        !caching_disabled.load(std::memory_order_relaxed)) {
      thread_local cache_reaper reaper;  // first use on this thread arms the cleanup
      (void)reaper;
      cache.registered = true;
      frame_allocator::release(frame, size);  // now cached
      return;
    }
  }
  ::operator delete(frame);
}

}  // namespace detail

void frame_allocator::disable_caching() noexcept {
  detail::caching_disabled.store(true, std::memory_order_relaxed);
}

void frame_allocator::trim_this_thread() noexcept {
  detail::free_all(detail::tl_frame_cache);
}

frame_allocator::stats frame_allocator::this_thread_stats() noexcept {
  return {detail::tl_frame_cache.hits, detail::tl_frame_cache.misses};
}

}  // namespace pools::coroutines
