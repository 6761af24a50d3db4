// SPDX-License-Identifier: MIT
// pools/two_lock_queue.hpp — a FIFO for many producers and many consumers: two locks, no
// allocation per item.
//
// A queue guarded by one mutex makes every producer and every consumer take that lock for every
// item, so the thread that posts and the threads that run fight over one cache line. This queue
// gives each end its own lock (Michael & Scott's "two-lock queue", 1996): producers lock the
// tail, consumers lock the head, and the one thing the two ends share is the counter `pushed_`
// that the tail publishes and the head reads. The locks are spin locks (pools/spinlock.hpp): each
// critical section is a few stores, far shorter than a futex sleep.
//
//   producers ──lock tail──►  [seg]──►[seg]──►[seg]  ◄──lock head── consumers
//                                 ▲ recycled segment (spare_) goes back to the tail
//
// Items live in segments of about 4 KiB in a singly linked list: an item is move-constructed
// into its slot, a segment is allocated once per `segment::capacity` items, and the segment the
// head leaves behind is kept as a spare for the tail, so a queue in steady state allocates
// nothing at all.
//
// Publication: the tail writes the slot, then stores pushed_ + 1. The head reads pushed_ with
// acquire before it touches the slot, so the slot (and the `next` link of a new segment, written
// before its first slot is published) is complete when read.
//
// Users: the futures pool's task queue (items: pools::task_function) and the coroutine pool's
// injection queue (items: coroutine frame addresses, taken in batches).
#pragma once

#include <pools/cache_line.hpp>
#include <pools/spinlock.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>  // std::lock_guard
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace pools {

template <class T>
class two_lock_queue {
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_destructible_v<T>,
                "two_lock_queue: items move out of their slots inside a critical section");

 public:
  two_lock_queue() : tail_{new segment}, head_{tail_.seg} {}
  two_lock_queue(const two_lock_queue&) = delete;
  two_lock_queue& operator=(const two_lock_queue&) = delete;

  /// Destroys the items still queued (a task's promise, if any, reports broken_promise).
  ~two_lock_queue() {
    std::uint64_t left =
        pushed_.value.load(std::memory_order_relaxed) - head_.popped.load(std::memory_order_relaxed);
    segment* seg = head_.seg;
    std::size_t index = head_.index;
    for (; left != 0; --left) {
      if (index == segment::capacity) {
        seg = seg->next;
        index = 0;
      }
      seg->slot(index++)->~T();
    }
    for (segment* s = head_.seg; s != nullptr;) delete std::exchange(s, s->next);
    delete spare_.load(std::memory_order_relaxed);
  }

  /// Appends an item. Publishes it with a seq_cst store: the pools' wake-up protocols rely on
  /// "publish the item, then look for sleeping workers" never being reordered. Throws
  /// std::bad_alloc only when a new segment is needed and cannot be allocated; the item is then
  /// untouched.
  void push(T&& item) {
    const std::lock_guard lock(tail_.mutex);
    if (tail_.index == segment::capacity) grow_tail();
    ::new (static_cast<void*>(tail_.seg->slot(tail_.index))) T(std::move(item));
    ++tail_.index;
    // Only the tail-lock holder writes pushed_, so load + store is enough (no read-modify-write).
    pushed_.value.store(pushed_.value.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  }

  /// Moves the oldest item into `out` and returns true, unless the queue is empty or admit()
  /// refuses. admit() runs under the head lock, after the queue was found non-empty: the futures
  /// pool uses it to check "paused?" and to count the task as running in the same critical section
  /// that removes it from the queue, so no observer can see a task that is in neither place.
  template <class Admit>
  bool try_pop(T& out, Admit&& admit) {
    if (!maybe_nonempty_hint()) return false;  // no lock traffic while idle workers poll
    segment* retired = nullptr;
    {
      const std::lock_guard lock(head_.mutex);
      const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
      // pushed_ is the one line the producer writes on every push: reading it costs a cache
      // miss inside this critical section, which every consumer serialises on. Items up to the
      // last value read are published already, so it is re-read only when they have run out.
      if (popped == head_.known_pushed.load(std::memory_order_relaxed)) {
        head_.known_pushed.store(pushed_.value.load(std::memory_order_acquire), std::memory_order_relaxed);
        if (popped == head_.known_pushed.load(std::memory_order_relaxed)) return false;
      }
      if (!admit()) return false;
      retired = take_front(out);
      head_.popped.store(popped + 1, std::memory_order_release);
    }
    if (retired != nullptr) recycle(retired);
    return true;
  }

  /// Moves up to `max` of the oldest items into out[0..n) and returns n (0 only when empty or max
  /// is 0); how many is `share(queued)`, at least 1, at most `queued` and `max`, asked under the
  /// head lock with the number queued now: a fair share of a burst in one critical section.
  template <class Share>
  std::size_t try_pop_batch(T* out, std::size_t max, Share&& share) {
    if (!maybe_nonempty_hint()) return 0;
    // n ≤ capacity, so the batch crosses into the next segment at most once.
    segment* retired = nullptr;
    std::size_t n = 0;
    {
      const std::lock_guard lock(head_.mutex);
      const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
      // A batch wants the queue's length now, not the last snapshot: one read of pushed_ per batch.
      const std::uint64_t pushed = pushed_.value.load(std::memory_order_acquire);
      head_.known_pushed.store(pushed, std::memory_order_relaxed);
      const auto queued = static_cast<std::size_t>(pushed - popped);
      if (queued == 0) return 0;
      n = std::min({std::max<std::size_t>(share(queued), 1), queued, max, segment::capacity});
      for (std::size_t i = 0; i < n; ++i) {
        if (segment* s = take_front(out[i])) retired = s;
      }
      head_.popped.store(popped + n, std::memory_order_release);
    }
    if (retired != nullptr) recycle(retired);
    return n;
  }

  /// Items queued now. The popped count is read first: both counters only grow, so the difference read
  /// this way is never negative.
  std::size_t size() const noexcept {
    const std::uint64_t popped = head_.popped.load(std::memory_order_acquire);
    return static_cast<std::size_t>(pushed_.value.load(std::memory_order_acquire) - popped);
  }

  /// The check a worker makes after announcing that it is about to sleep; seq_cst pairs with the
  /// seq_cst store in push() (see the wake-up protocol of the pool that uses it).
  bool maybe_nonempty() const noexcept {
    return pushed_.value.load(std::memory_order_seq_cst) != head_.popped.load(std::memory_order_relaxed);
  }

  /// A cheap hint for polling loops; may be stale in either direction.
  bool maybe_nonempty_relaxed() const noexcept {
    return pushed_.value.load(std::memory_order_relaxed) != head_.popped.load(std::memory_order_relaxed);
  }

  /// Runs f() with the head lock held: no item leaves the queue meanwhile.
  template <class F>
  decltype(auto) with_consumer_lock(F&& f) {
    std::lock_guard lock(head_.mutex);
    return std::forward<F>(f)();
  }

  /// Removes every queued item and hands them to the caller, who destroys them outside the lock
  /// (a task's destructor is user code and may post to the pool).
  std::vector<T> take_all() {
    std::vector<T> taken;
    std::vector<segment*> retired;
    {
      std::lock_guard lock(head_.mutex);
      const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
      const std::uint64_t pushed = pushed_.value.load(std::memory_order_acquire);
      taken.resize(static_cast<std::size_t>(pushed - popped));
      for (T& item : taken) {
        if (segment* s = take_front(item)) retired.push_back(s);
      }
      head_.popped.store(pushed, std::memory_order_release);
      head_.known_pushed.store(pushed, std::memory_order_relaxed);
    }
    for (segment* s : retired) recycle(s);
    return taken;
  }

 private:
  // Slots fill a segment of about 4 KiB, one page, with the link (127 task_functions of 32 bytes,
  // 511 pointers). The slots stay raw bytes until a push constructs an item in one (zeroing them
  // would cost a page per segment).
  struct segment {  // NOLINT(cppcoreguidelines-pro-type-member-init)
    struct alignas(T) raw_slot {
      std::byte bytes[sizeof(T)];
    };
    static constexpr std::size_t capacity = (4096 - sizeof(void*)) / sizeof(raw_slot);
    T* slot(std::size_t i) noexcept { return std::launder(reinterpret_cast<T*>(&slots[i])); }
    segment* next = nullptr;
    raw_slot slots[capacity];
  };

  // Requires the head lock and a published item at the head. Moves it into `out`; returns the
  // segment the head left behind, if it crossed into the next one.
  segment* take_front(T& out) noexcept {
    segment* retired = nullptr;
    if (head_.index == segment::capacity) {
      retired = head_.seg;
      head_.seg = retired->next;
      head_.index = 0;
    }
    T* slot = head_.seg->slot(head_.index++);
    out = std::move(*slot);
    slot->~T();
    return retired;
  }

  // Requires the tail lock. The spare's exchange is acquire: the consumer that retired it had
  // finished reading its slots (release in recycle()) before the producer overwrites them.
  void grow_tail() {
    segment* fresh = spare_.exchange(nullptr, std::memory_order_acquire);
    if (fresh == nullptr) fresh = new segment;
    fresh->next = nullptr;
    tail_.seg->next = fresh;  // published with the first item stored in `fresh`
    tail_.seg = fresh;
    tail_.index = 0;
  }

  // Keeps one empty segment for the tail; frees the one it replaces, if any.
  void recycle(segment* empty) noexcept { delete spare_.exchange(empty, std::memory_order_acq_rel); }

  // As maybe_nonempty_relaxed(), but it reads the producer's line only when the items last seen
  // there have all been taken: a busy consumer's poll stays in the head's line.
  bool maybe_nonempty_hint() const noexcept {
    const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
    return popped != head_.known_pushed.load(std::memory_order_relaxed) ||
           popped != pushed_.value.load(std::memory_order_relaxed);
  }

  // Each end on its own cache line: a producer's lock and index stay in the producer's cache,
  // and everything a consumer touches to take an item (lock, position, popped count, its snapshot
  // of pushed_) is one line, so the critical section moves one line between consumers, not four.
  struct alignas(cache_line) tail_end {
    explicit tail_end(segment* s) : seg(s) {}
    spinlock mutex;
    segment* seg;
    std::size_t index = 0;
  };
  struct alignas(cache_line) head_end {
    explicit head_end(segment* s) : seg(s) {}
    spinlock mutex;
    segment* seg;
    std::size_t index = 0;
    // Written under the head lock; read without it by monitors (size()) and pollers.
    std::atomic<std::uint64_t> popped{0};
    // The last value of pushed_ read under the head lock: items below it are published. Atomic
    // only because maybe_nonempty_hint() reads it without the lock.
    std::atomic<std::uint64_t> known_pushed{0};
  };
  struct alignas(cache_line) counter {
    std::atomic<std::uint64_t> value{0};
  };

  tail_end tail_;
  counter pushed_;  // written under the tail lock; read by consumers (their line, not the lock's)
  head_end head_;
  alignas(cache_line) std::atomic<segment*> spare_{nullptr};
};

}  // namespace pools
