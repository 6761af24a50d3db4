// SPDX-License-Identifier: MIT
// chase_lev_deque.hpp — exercise 04-memory-order, A CHEAT (course/cheats/: instructor-only, left
// out of the hand-out). ctest -R exercise_04-memory-order_cheat_ proves the check fails it.
//
// THE CHEAT: a guess. The starting point with a DIFFERENT order strengthened: push()'s store of the
// slot made release ("the value must be published"), one line changed as the page asks, the
// weakened store of bottom left relaxed. A release store only orders what a thread sees when it
// reads THAT location with acquire; the thief reads bottom with acquire and the slot relaxed, so
// no edge is made. A test on x86 threads cannot tell it from the answer; the Relacy model can.
//
// This is a copy of the repository's work-stealing deque (common/include/pools/chase_lev_deque.hpp,
// Chase & Lev, with the C11 orders of Lê et al., PPoPP 2013) with the explanations taken out and
// ONE memory order (an order argument of a load, a store, a compare-exchange or a fence) made
// weaker than the algorithm needs. On x86 the weakened deque passes every test you can run on
// threads: the hardware is stronger than the C++ memory model. The check is a Relacy model (the
// deque with Relacy's atomics, which simulate every outcome the C++ model allows) and it finds a
// schedule in which an element is lost, taken twice, or read before it was written.
//
// TODO(student): find the weakened order and restore it, changing that one argument only.
// Making every order seq_cst also passes the check, but that is not the answer: be ready to say
// which line it was, which happens-before edge (or which total order) it provides, and what a
// thief or the owner could see without it. Do not change the algorithm or the scenarios.
//
//            steal() ─► top                        bottom ◄─ push() / pop()
//   thieves, any thread  │ [t] [t+1] ... [b-1] │     owner thread only
//
// Who may call what: push() and pop() the owner thread only; steal() any thread. The ring doubles
// when full; old rings are kept until the deque is destroyed (a late thief may still read one).
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
    r->slot(b).store(value, std::memory_order_release);
    bottom_.store(b + 1, std::memory_order_relaxed);
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
