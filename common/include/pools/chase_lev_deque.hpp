// SPDX-License-Identifier: MIT
// pools/chase_lev_deque.hpp — the per-worker work-stealing deque (Chase & Lev, SPAA 2005),
// with the C11 memory orders proved correct by Lê, Pop, Cohen and Zappa Nardelli, "Correct and
// efficient work-stealing for weak memory models", PPoPP 2013 (figure 1 of the paper).
//
//            steal() ─► top                        bottom ◄─ push() / pop()
//   thieves, any thread  │ [t] [t+1] ... [b-1] │     owner thread only
//              CAS on top ┘  oldest       newest └ no CAS, except for the last element
//
// The owner pushes and pops at the bottom (LIFO: the newest, cache-hot child runs next); thieves
// take from the top (FIFO: the oldest item, which in fork/join is the biggest piece of work).
// Owner operations are plain loads and stores plus one fence in pop(); a compare-and-swap happens
// only when owner and thieves may want the same, last, element.
//
// Growth and reclamation. The ring doubles when full. A thief may have loaded the old ring pointer
// just before the owner swapped it and still be reading a slot of it, and nothing tells the owner
// when that thief is done. So old rings are never freed while the deque lives: they are *retired*
// to a list the owner keeps and freed by the destructor, when no thief can exist (a pool destroys
// its deques after joining every worker). Because the ring doubles, the retired rings together are
// smaller than the live one: memory stays below twice the peak, with no hazard pointers or epochs.
// Retired rings stay valid for the reads that need them: the items a late thief can see there
// ([top, old bottom)) were copied, not moved, and its CAS on `top` decides ownership either way.
//
// The same source is model-checked by Relacy (common/model/): the deque is written against an
// `Atomics` policy whose members have std::atomic's names, and the model test plugs in Relacy's
// atomics. Building with POOLS_CHASE_LEV_MUTANT=1 or =2 weakens one order (see below) and the
// model test must then fail; CI checks that it does.
//
// Shared by the variants that steal work (coroutines: coroutine handles; fibers: tagged task and
// fiber pointers). Publishing work is the deque's job; waking a sleeping worker is the pool's:
// push() only releases, so a pool whose parking relies on a store-load handshake with the new
// bottom adds its own seq_cst fence after push() (pools/detail/seq_cst_fence.hpp).
#pragma once

#include <pools/detail/seq_cst_fence.hpp>

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools {

/// The atomics of production code. A policy provides `atomic<T>` with load/store/
/// compare_exchange_strong taking std::memory_order, and `thread_fence(order)`.
struct std_atomics {
  template <class T>
  using atomic = std::atomic<T>;
  static void thread_fence([[maybe_unused]] std::memory_order order) noexcept {
#if POOLS_FENCE_RMW
    detail::seq_cst_fence();  // ThreadSanitizer: a stand-in at least as strong (seq_cst_fence.hpp)
#else
    std::atomic_thread_fence(order);
#endif
  }
};

#ifndef POOLS_CHASE_LEV_MUTANT
#define POOLS_CHASE_LEV_MUTANT 0
#endif

namespace detail {
// The two orders a mutant weakens, so the model test can show that each one is needed.
// Mutant 1: pop()'s seq_cst fence becomes acq_rel: owner and a thief can both take one element.
inline constexpr std::memory_order pop_fence_order =
    POOLS_CHASE_LEV_MUTANT == 1 ? std::memory_order_acq_rel : std::memory_order_seq_cst;
// Mutant 2: push()'s release store of bottom becomes relaxed: a thief can read an unwritten slot.
inline constexpr std::memory_order push_publish_order =
    POOLS_CHASE_LEV_MUTANT == 2 ? std::memory_order_relaxed : std::memory_order_release;
}  // namespace detail

/// What steal() found.
enum class steal_status { success, empty, lost_race };

template <class T>
struct steal_result {
  steal_status status;
  T value;  // meaningful only when status == success
};

template <class T, class Atomics = std_atomics>
class chase_lev_deque {
  static_assert(std::is_trivially_copyable_v<T>, "slots are read racily by thieves: T must be a plain value");
  template <class U>
  using atomic = typename Atomics::template atomic<U>;

 public:
  explicit chase_lev_deque(std::size_t initial_capacity = 256) {
    std::size_t capacity = 2;
    while (capacity < initial_capacity) capacity *= 2;
    auto first = std::make_unique<ring>(static_cast<std::int64_t>(capacity));
    top_.store(0, std::memory_order_relaxed);     // before any thread can see the deque
    bottom_.store(0, std::memory_order_relaxed);  // (it is published by starting the threads)
    ring_.store(first.get(), std::memory_order_relaxed);
    rings_.push_back(std::move(first));
  }

  chase_lev_deque(const chase_lev_deque&) = delete;
  chase_lev_deque& operator=(const chase_lev_deque&) = delete;

  /// Owner only. A full ring is replaced by one twice the size: may throw std::bad_alloc (nothing pushed).
  void push(T value) {
    // relaxed: only the owner writes bottom, so it reads its own latest value.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    // acquire: pairs with the thieves' CAS on top (seq_cst, so also release). Seeing top >= k means
    // the thief that took slot k has finished reading it, so overwriting that slot below, after
    // the ring wrapped around, cannot change the value the thief already returned.
    const std::int64_t t = top_.load(std::memory_order_acquire);
    // relaxed: only the owner writes ring_.
    ring* r = ring_.load(std::memory_order_relaxed);
    if (b - t > r->capacity - 1) [[unlikely]] {
      grow_and_publish(value, r, t, b);  // the ring is full: rare, and out of line (see there)
      return;
    }
    store_and_publish(value, r, b);
  }

  /// Owner only. Takes the newest item into `out`; false when empty or a thief won the last item
  /// (`out` is then meaningless). Always inlined, as a hot path: pools/coroutines/detail/worker.hpp.
  [[gnu::always_inline]] bool pop(T& out) {
    // relaxed: the owner's own variables.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* r = ring_.load(std::memory_order_relaxed);
    // relaxed: the fence below orders it. Claims slot b before looking at top.
    bottom_.store(b, std::memory_order_relaxed);
    // seq_cst: the heart of the algorithm. Store(bottom) then load(top) here, load(top) then
    // load(bottom) in steal() with a seq_cst fence between: a store-load pattern that only seq_cst
    // fences order. Either the thief sees the decremented bottom (and backs off the slot) or this
    // load sees the thief's incremented top; without it both can take the same item (mutant 1).
    Atomics::thread_fence(detail::pop_fence_order);
    // relaxed: ordered by the fence above.
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t <= b) {
      // relaxed: the owner wrote this slot itself.
      out = r->slot(b).load(std::memory_order_relaxed);
      if (t == b) {
        // The last element: a thief may be taking it too. The winner of the CAS on top owns it.
        // seq_cst on success: like the thieves' CAS, it is part of the single total order the
        // fences above rely on. relaxed on failure: a thief took it; nothing was read from it.
        const bool won =
            top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
        // relaxed: the deque is empty either way; restoring bottom = top is the owner's business.
        bottom_.store(b + 1, std::memory_order_relaxed);
        return won;
      }
      return true;
    }
    // Empty: undo the claim. relaxed: no thief takes from an empty deque, whatever bottom it sees.
    bottom_.store(b + 1, std::memory_order_relaxed);
    return false;
  }

  /// Any thread. Takes the oldest item.
  steal_result<T> steal() {
    // acquire: pairs with the CAS of an earlier thief, so its take happens-before ours.
    std::int64_t t = top_.load(std::memory_order_acquire);
    // seq_cst: the other half of pop()'s store-load pattern (see there).
    Atomics::thread_fence(std::memory_order_seq_cst);
    // acquire: pairs with push()'s release store; the slot at t and the ring holding it are visible.
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return {steal_status::empty, T{}};
    // acquire (the paper's consume, which compilers implement as acquire): the ring's slots were
    // written (copied by grow) before ring_ was stored with release.
    ring* r = ring_.load(std::memory_order_acquire);
    // relaxed: the value only counts if the CAS below succeeds, which proves no one took slot t.
    T value = r->slot(t).load(std::memory_order_relaxed);
    // seq_cst on success: orders this claim with the owner's pop() fence (see there) and, as a
    // release, tells a later push() (acquire load of top) that the slot has been read.
    // relaxed on failure: another thread took slot t; we return without using anything we read.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {steal_status::lost_race, T{}};
    }
    return {steal_status::success, value};
  }

  /// Owner only. Copies the item pop() would return into `out` without taking it; false when empty.
  /// A thief may take that item right after: only a following pop() decides who owns it. (Lets an
  /// owner check that the newest item is the one it wants before popping it, e.g. a joined child.)
  bool peek_bottom(T& out) const {
    // relaxed: bottom and ring_ are the owner's own; top is a hint, as the caller's pop() decides.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    if (b < top_.load(std::memory_order_relaxed)) return false;
    // relaxed: the owner wrote this slot itself.
    out = ring_.load(std::memory_order_relaxed)->slot(b).load(std::memory_order_relaxed);
    return true;
  }

  /// Any thread; a snapshot that may be stale by the time it returns (a hint for idle workers).
  bool looks_empty() const {
    // relaxed both: a hint; callers that must not miss work re-check after a seq_cst fence.
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return b <= t;
  }

  /// Owner only: how many rings exist (1 + retired ones), for tests of growth.
  std::size_t ring_count() const noexcept { return rings_.size(); }
  /// Owner only: the current capacity.
  std::int64_t capacity() const { return ring_.load(std::memory_order_relaxed)->capacity; }

 private:
  struct ring {
    explicit ring(std::int64_t cap)
        : capacity(cap), mask(cap - 1), slots(new atomic<T>[static_cast<std::size_t>(cap)]) {}
    atomic<T>& slot(std::int64_t i) { return slots[static_cast<std::size_t>(i & mask)]; }
    const std::int64_t capacity;
    const std::int64_t mask;
    std::unique_ptr<atomic<T>[]> slots;
  };

  // Owner only: the end of push(), once ring r has room for slot b.
  void store_and_publish(T value, ring* r, std::int64_t b) {
    // relaxed: the store of bottom below publishes it.
    r->slot(b).store(value, std::memory_order_relaxed);
    // release (the paper: a release fence, then a relaxed store; equivalent, as this one store is
    // what publishes): a thief that reads the new bottom with acquire also sees the slot written
    // above and, after a grow, the new ring and its copied slots.
    bottom_.store(b + 1, detail::push_publish_order);
  }

  // Owner only: push() when ring `old` is full. Out of line and cold, so that push()'s common path
  // is three loads, a compare and two stores, small enough to inline into the caller. Inlined, the
  // growth (an allocation, a copy loop, a vector push_back) would make push() an out-of-line call
  // that saves and restores six registers on every push. It also does the final stores, so that
  // nothing push() needs after it (value, b) has to survive the call in saved registers.
  [[gnu::noinline, gnu::cold]] void grow_and_publish(T value, ring* old, std::int64_t t, std::int64_t b) {
    store_and_publish(value, grow(old, t, b), b);
  }

  // Owner only, from grow_and_publish(). Copies the live items [t, b) into a ring twice the size.
  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>(old->capacity * 2);
    // relaxed loads and stores: the owner wrote every live slot itself; thieves get the copies
    // through the release store of ring_ below and the one of bottom in push().
    for (std::int64_t i = t; i < b; ++i) {
      bigger->slot(i).store(old->slot(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    ring* raw = bigger.get();
    rings_.push_back(std::move(bigger));  // the old ring stays allocated: see the header comment
    // release: a thief that loads the new ring with acquire sees the copies made above.
    ring_.store(raw, std::memory_order_release);
    return raw;
  }

  // top_ and bottom_ on separate cache lines: thieves hammer top_, the owner writes bottom_.
  alignas(64) atomic<std::int64_t> top_;
  alignas(64) atomic<std::int64_t> bottom_;
  alignas(64) atomic<ring*> ring_;
  std::vector<std::unique_ptr<ring>> rings_;  // every ring ever used; owner only; freed at the end
};

}  // namespace pools
