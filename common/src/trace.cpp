// SPDX-License-Identifier: MIT
// Recording (pools/trace.hpp): one ring buffer per thread, registered once, never freed.
#include <pools/trace.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "trace_registry.hpp"

namespace pools::trace {
namespace detail {

registry& the_registry() noexcept {
  // Never destroyed: a detached thread may still record during static destruction.
  // No memory at the first event ends the program (emit is noexcept).
  static registry* r = new registry;  // NOLINT(bugprone-unhandled-exception-at-new)
  return *r;
}

}  // namespace detail

namespace {

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

constinit thread_local detail::ring* tl_ring = nullptr;

// Marks the thread's ring as ended when the thread exits, so that the export can tell a worker
// that was idle through the window (a track, empty) from one of a pool destroyed before it (none).
struct exit_marker {
  exit_marker() = default;
  exit_marker(const exit_marker&) = delete;
  exit_marker& operator=(const exit_marker&) = delete;
  ~exit_marker() {
    if (tl_ring != nullptr) tl_ring->exited_ns.store(now_ns(), std::memory_order_relaxed);
  }
};

detail::ring& my_ring() noexcept {
  if (tl_ring == nullptr) {
    auto& reg = detail::the_registry();
    std::lock_guard lock(reg.mutex);
    auto r = std::make_unique<detail::ring>();
    // _for_overwrite: no zeroing, so a thread that records little touches few of the 8 MiB.
    r->records = std::make_unique_for_overwrite<record[]>(ring_capacity);
    r->track = static_cast<std::uint16_t>(reg.rings.size());
    r->name = "thread " + std::to_string(r->track);
    tl_ring = r.get();
    reg.rings.push_back(std::move(r));
    static thread_local exit_marker marker;  // constructed here, destroyed as the thread exits
    (void)marker;
  }
  return *tl_ring;
}

}  // namespace

void emit(event what, std::uint64_t id, std::uint64_t pool, std::uint32_t arg) noexcept {
  detail::ring& r = my_ring();
  // A worker's task events carry its pool, so the summary can count per pool.
  if (pool == 0) pool = r.pool;
  // relaxed: only this thread writes head; the exporter reads it after joining the threads.
  const std::uint64_t h = r.head.load(std::memory_order_relaxed);
  r.records[h & (ring_capacity - 1)] =
      record{now_ns(), id, pool, arg, r.track, what, pool != 0 && pool == r.pool};
  r.head.store(h + 1, std::memory_order_release);
}

void name_worker(const void* pool, std::string_view pool_name, unsigned index) noexcept {
  detail::ring& r = my_ring();
  r.pool = id_of(pool);
  r.index = index;
  r.named_ns = now_ns();
  r.name = std::string(pool_name) + " worker " + std::to_string(index);
}

void name_thread(std::string_view name) noexcept {
  my_ring().name = std::string(name);
}

void mark() noexcept {
  auto& reg = detail::the_registry();
  std::lock_guard lock(reg.mutex);
  reg.mark_ns.store(now_ns(), std::memory_order_relaxed);
  // Where each ring stands, to count the events recorded from here on (summary::recorded), those
  // the ring overwrites included. relaxed: a count, read again by the exporter after the joins.
  for (const auto& r : reg.rings) r->head_at_mark = r->head.load(std::memory_order_relaxed);
}

}  // namespace pools::trace
