// pools/fibers/detail/work_stealing_deque.hpp — the Chase–Lev deque each worker owns.
//
// The owner pushes and pops at the bottom (LIFO: the task spawned last is the one whose data is
// still in cache, and the one a join is about to wait for); thieves take from the top (FIFO: the
// oldest task is usually the biggest piece of a divide-and-conquer tree, so one steal moves a
// lot of work). Only the last element is contended, and only then do owner and thief race with
// a CAS on `top`. The ring grows when full; old rings are kept until the deque dies because a
// thief may still be reading one (the simplest safe reclamation).
//
// Memory orders follow Lê, Pop, Cohen, Zappa Nardelli, "Correct and Efficient Work-Stealing for
// Weak Memory Models" (PPoPP 2013), with the seq_cst fences replaced by seq_cst operations on
// top and bottom themselves. The instructions are the same on x86 (a locked or fenced store),
// and ThreadSanitizer, which does not model standalone fences (GCC warns at each one under
// -fsanitize=thread), then sees every ordering the algorithm relies on.
//
// push's store of bottom is seq_cst rather than release for a second reason: it is one half of
// the Dekker handshake with parking workers (scheduler.cpp, notify_one_if_sleeping).
//
// Items are non-zero std::uintptr_t (tagged pointers); 0 means "nothing".
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pools::fibers::detail {

class work_stealing_deque {
 public:
  explicit work_stealing_deque(std::size_t capacity = 256) {
    std::size_t c = 8;
    while (c < capacity) c *= 2;
    rings_.push_back(std::make_unique<ring>(c));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }
  work_stealing_deque(const work_stealing_deque&) = delete;
  work_stealing_deque& operator=(const work_stealing_deque&) = delete;

  /// Owner only. May allocate (doubling the ring).
  void push(std::uintptr_t item) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    ring* r = ring_.load(std::memory_order_relaxed);
    if (b - t > static_cast<std::int64_t>(r->mask)) r = grow(r, t, b);
    r->put(b, item);
    // Release half: a thief that reads the new bottom also sees the item and everything written
    // before push (the task's captures). seq_cst: see the header comment. An exchange rather than
    // a store: GCC compiles a seq_cst store as mov + mfence, an exchange as one xchg, which is
    // the cheaper full barrier on current x86 cores.
    (void)bottom_.exchange(b + 1, std::memory_order_seq_cst);
  }

  /// Owner only. Returns 0 when empty.
  std::uintptr_t pop() noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* r = ring_.load(std::memory_order_relaxed);
    // seq_cst store then seq_cst load: the new bottom must be visible before we read top, or a
    // thief and the owner could both take the last item (the store-load reordering x86 allows).
    (void)bottom_.exchange(b, std::memory_order_seq_cst);  // xchg, as in push
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {  // was empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return 0;
    }
    std::uintptr_t item = r->get(b);
    if (t == b) {  // the last item: race the thieves for it
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        item = 0;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return item;
  }

  /// Owner only: the item pop() would return, without taking it (a thief may take it meanwhile).
  std::uintptr_t peek_bottom() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    if (b < top_.load(std::memory_order_relaxed)) return 0;
    return ring_.load(std::memory_order_relaxed)->get(b);
  }

  /// Any thread. Returns 0 when empty or when another thief or the owner won the race.
  std::uintptr_t steal() noexcept {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);  // after top, in the total order
    if (t >= b) return 0;
    ring* r = ring_.load(std::memory_order_acquire);
    const std::uintptr_t item = r->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return 0;
    return item;
  }

  /// A hint for parking decisions; exact only when no one else touches the deque.
  bool empty() const noexcept {
    return bottom_.load(std::memory_order_seq_cst) <= top_.load(std::memory_order_seq_cst);
  }

 private:
  struct ring {
    explicit ring(std::size_t capacity)
        : mask(capacity - 1), slots(new std::atomic<std::uintptr_t>[capacity]) {}
    // Slots are atomics (accessed relaxed) because a thief may read a slot the owner is about to
    // overwrite; the CAS on top decides who keeps the value, but the read itself must not race.
    std::uintptr_t get(std::int64_t i) const noexcept {
      return slots[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed);
    }
    void put(std::int64_t i, std::uintptr_t v) noexcept {
      slots[static_cast<std::size_t>(i) & mask].store(v, std::memory_order_relaxed);
    }
    std::size_t mask;
    std::unique_ptr<std::atomic<std::uintptr_t>[]> slots;
  };

  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>((old->mask + 1) * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    ring* r = bigger.get();
    rings_.push_back(std::move(bigger));
    ring_.store(r, std::memory_order_release);
    return r;
  }

  // top and bottom on separate cache lines: thieves write top, the owner writes bottom.
  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<ring*> ring_{nullptr};
  std::vector<std::unique_ptr<ring>> rings_;  // owner only; every ring ever used
};

}  // namespace pools::fibers::detail
