// SPDX-License-Identifier: MIT
// CHEAT (instructor only): the reference deque whose steal() always says the deque is empty. The
// owner still takes every value exactly once (pop), so a check of "every value taken once" alone
// passes it; the check also requires a thief to take a value in some schedule.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace exercise {

/// The atomics of a real program. The check plugs in Relacy's instead (same member names).
struct std_atomics {
  template <class T>
  using atomic = std::atomic<T>;
  static void thread_fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }
};

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
    top_.store(0, std::memory_order_relaxed);
    bottom_.store(0, std::memory_order_relaxed);
    ring_.store(first.get(), std::memory_order_relaxed);
    rings_.push_back(std::move(first));
  }

  chase_lev_deque(const chase_lev_deque&) = delete;
  chase_lev_deque& operator=(const chase_lev_deque&) = delete;

  /// Owner only. Never fails: a full ring is replaced by one twice the size.
  void push(T value) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    ring* r = ring_.load(std::memory_order_relaxed);
    if (b - t > r->capacity - 1) r = grow(r, t, b);
    r->slot(b).store(value, std::memory_order_relaxed);
    // release (was relaxed): publishes the slot written above, and the ring after a grow, to a
    // thief that reads this bottom with acquire in steal().
    bottom_.store(b + 1, std::memory_order_release);
  }

  /// Owner only. Takes the newest item into `out`; false when the deque is empty or a thief won
  /// the last item.
  bool pop(T& out) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* r = ring_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_relaxed);
    Atomics::thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t <= b) {
      out = r->slot(b).load(std::memory_order_relaxed);
      if (t == b) {
        // The last element: a thief may be taking it too. The winner of the CAS on top owns it.
        const bool won =
            top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
        bottom_.store(b + 1, std::memory_order_relaxed);
        return won;
      }
      return true;
    }
    bottom_.store(b + 1, std::memory_order_relaxed);  // empty: undo the claim
    return false;
  }

  /// Any thread. Takes the oldest item.
  steal_result<T> steal() {
    if (bottom_.load(std::memory_order_relaxed) >= 0) return {steal_status::empty, T{}};
    std::int64_t t = top_.load(std::memory_order_acquire);
    Atomics::thread_fence(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return {steal_status::empty, T{}};
    ring* r = ring_.load(std::memory_order_acquire);
    T value = r->slot(t).load(std::memory_order_relaxed);
    // The value only counts if this CAS succeeds: it proves no one else took slot t.
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {steal_status::lost_race, T{}};
    }
    return {steal_status::success, value};
  }

 private:
  struct ring {
    explicit ring(std::int64_t cap)
        : capacity(cap), mask(cap - 1), slots(new atomic<T>[static_cast<std::size_t>(cap)]) {}
    atomic<T>& slot(std::int64_t i) { return slots[static_cast<std::size_t>(i & mask)]; }
    const std::int64_t capacity;
    const std::int64_t mask;
    std::unique_ptr<atomic<T>[]> slots;
  };

  // Owner only, from push(). Copies the live items [t, b) into a ring twice the size.
  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>(old->capacity * 2);
    for (std::int64_t i = t; i < b; ++i) {
      bigger->slot(i).store(old->slot(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    ring* raw = bigger.get();
    rings_.push_back(std::move(bigger));  // the old ring stays allocated (a thief may read it)
    ring_.store(raw, std::memory_order_release);
    return raw;
  }

  alignas(64) atomic<std::int64_t> top_;
  alignas(64) atomic<std::int64_t> bottom_;
  alignas(64) atomic<ring*> ring_;
  std::vector<std::unique_ptr<ring>> rings_;  // every ring ever used; owner only
};

}  // namespace exercise
