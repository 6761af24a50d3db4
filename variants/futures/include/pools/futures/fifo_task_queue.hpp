// pools/futures/fifo_task_queue.hpp — the FIFO queue of the futures pool: two locks, no
// allocation per task.
//
// The textbook pool guards its queue with one mutex that every producer and every worker takes
// for every task, so the thread that posts and the threads that run fight over one cache line.
// This queue gives each end its own lock (Michael & Scott's "two-lock queue", 1996): producers
// lock the tail, workers lock the head, and the one thing the two ends share is the counter
// `pushed_` that the tail publishes and the head reads. The locks are spin locks (the shared
// pools/spinlock.hpp): each critical section is a few stores, far shorter than a futex sleep.
//
//   producers ──lock tail──►  [seg]──►[seg]──►[seg]  ◄──lock head── workers
//                                 ▲ recycled segment (spare_) goes back to the tail
//
// Tasks live in fixed-size segments of a singly linked list. A task is move-constructed into its
// slot (pools::task_function keeps small lambdas inline, so this is a 32-byte copy, no malloc);
// a segment is allocated once per `segment::capacity` tasks, and the segment the head leaves
// behind is kept as a spare for the tail, so a queue in steady state allocates nothing at all.
//
// Publication: the tail writes the slot, then stores pushed_ + 1. The head reads pushed_ with
// acquire before it touches the slot, so the slot (and the `next` link of a new segment, written
// before its first slot is published) is complete when read.
#pragma once

#include <pools/futures/detail/cpu.hpp>
#include <pools/spinlock.hpp>
#include <pools/unique_function.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>  // std::lock_guard
#include <new>
#include <utility>
#include <vector>

namespace pools::futures {

class fifo_task_queue {
 public:
  fifo_task_queue() : tail_{new segment}, head_{tail_.seg} {}
  fifo_task_queue(const fifo_task_queue&) = delete;
  fifo_task_queue& operator=(const fifo_task_queue&) = delete;

  /// Destroys the tasks still queued (their promises, if any, report broken_promise).
  ~fifo_task_queue() {
    std::uint64_t left =
        pushed_.value.load(std::memory_order_relaxed) - head_.popped.load(std::memory_order_relaxed);
    segment* seg = head_.seg;
    std::size_t index = head_.index;
    for (; left != 0; --left) {
      if (index == segment::capacity) {
        seg = seg->next;
        index = 0;
      }
      seg->slot(index++)->~task_function();
    }
    for (segment* s = head_.seg; s != nullptr;) delete std::exchange(s, s->next);
    delete spare_.load(std::memory_order_relaxed);
  }

  /// Appends a task. Publishes it with a seq_cst store: the pool's wake-up protocol relies on
  /// "publish the task, then look for sleeping workers" never being reordered (thread_pool.hpp).
  /// Throws std::bad_alloc only when a new segment is needed and cannot be allocated; the task is
  /// then untouched.
  void push(task_function&& task) {
    const std::lock_guard lock(tail_.mutex);
    if (tail_.index == segment::capacity) grow_tail();
    ::new (static_cast<void*>(tail_.seg->slot(tail_.index))) task_function(std::move(task));
    ++tail_.index;
    // Only the tail-lock holder writes pushed_, so load + store is enough (no read-modify-write).
    pushed_.value.store(pushed_.value.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
  }

  /// Moves the oldest task into `out` and returns true, unless the queue is empty or admit()
  /// refuses. admit() runs under the head lock, after the queue was found non-empty: the pool
  /// uses it to check "paused?" and to count the task as running in the same critical section
  /// that removes it from the queue, so no observer can see a task that is in neither place.
  template <class Admit>
  bool try_pop(task_function& out, Admit&& admit) {
    if (!maybe_nonempty_hint()) return false;  // no lock traffic while idle workers poll
    segment* retired = nullptr;
    {
      const std::lock_guard lock(head_.mutex);
      const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
      // pushed_ is the one line the producer writes on every push: reading it costs a cache
      // miss inside this critical section, which every worker serialises on. Tasks up to the
      // last value read are published already, so it is re-read only when they have run out.
      if (popped == head_.known_pushed.load(std::memory_order_relaxed)) {
        head_.known_pushed.store(pushed_.value.load(std::memory_order_acquire), std::memory_order_relaxed);
        if (popped == head_.known_pushed.load(std::memory_order_relaxed)) return false;
      }
      if (!admit()) return false;
      if (head_.index == segment::capacity) {
        retired = head_.seg;
        head_.seg = retired->next;
        head_.index = 0;
      }
      task_function* slot = head_.seg->slot(head_.index++);
      out = std::move(*slot);
      slot->~task_function();
      head_.popped.store(popped + 1, std::memory_order_release);
    }
    if (retired != nullptr) recycle(retired);
    return true;
  }

  /// Tasks queued now. The popped count is read first: both counters only grow, so the difference read
  /// this way is never negative.
  std::size_t size() const noexcept {
    const std::uint64_t popped = head_.popped.load(std::memory_order_acquire);
    return static_cast<std::size_t>(pushed_.value.load(std::memory_order_acquire) - popped);
  }

  /// The check a worker makes after announcing that it is about to sleep; seq_cst pairs with the
  /// seq_cst store in push() (see the wake-up protocol in thread_pool.hpp).
  bool maybe_nonempty() const noexcept {
    return pushed_.value.load(std::memory_order_seq_cst) != head_.popped.load(std::memory_order_relaxed);
  }

  /// A cheap hint for polling loops; may be stale in either direction.
  bool maybe_nonempty_relaxed() const noexcept {
    return pushed_.value.load(std::memory_order_relaxed) != head_.popped.load(std::memory_order_relaxed);
  }

  /// Runs f() with the head lock held: no task leaves the queue meanwhile.
  template <class F>
  decltype(auto) with_consumer_lock(F&& f) {
    std::lock_guard lock(head_.mutex);
    return std::forward<F>(f)();
  }

  /// Removes every queued task and hands them to the caller, who destroys them outside the lock
  /// (a task's destructor is user code and may post to the pool).
  std::vector<task_function> take_all() {
    std::vector<task_function> taken;
    std::vector<segment*> retired;
    {
      std::lock_guard lock(head_.mutex);
      const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
      const std::uint64_t pushed = pushed_.value.load(std::memory_order_acquire);
      taken.reserve(static_cast<std::size_t>(pushed - popped));
      for (std::uint64_t i = popped; i != pushed; ++i) {
        if (head_.index == segment::capacity) {
          retired.push_back(head_.seg);
          head_.seg = head_.seg->next;
          head_.index = 0;
        }
        task_function* slot = head_.seg->slot(head_.index++);
        taken.push_back(std::move(*slot));
        slot->~task_function();
      }
      head_.popped.store(pushed, std::memory_order_release);
      head_.known_pushed.store(pushed, std::memory_order_relaxed);
    }
    for (segment* s : retired) recycle(s);
    return taken;
  }

 private:
  // 127 slots of 32 bytes plus the link: just under 4 KiB, one page. The slots stay raw bytes until
  // a push constructs a task in one (zeroing them would cost a page per segment).
  struct segment {  // NOLINT(cppcoreguidelines-pro-type-member-init)
    static constexpr std::size_t capacity = 127;
    task_function* slot(std::size_t i) noexcept {
      return std::launder(reinterpret_cast<task_function*>(&slots[i]));
    }
    struct alignas(task_function) raw_slot {
      std::byte bytes[sizeof(task_function)];
    };
    segment* next = nullptr;
    raw_slot slots[capacity];
  };

  // Requires the tail lock. The spare's exchange is acquire: the worker that retired it had
  // finished reading its slots (release in recycle()) before the producer overwrites them.
  void grow_tail() {
    segment* fresh = spare_.exchange(nullptr, std::memory_order_acquire);
    if (fresh == nullptr) fresh = new segment;
    fresh->next = nullptr;
    tail_.seg->next = fresh;  // published with the first task stored in `fresh`
    tail_.seg = fresh;
    tail_.index = 0;
  }

  // Keeps one empty segment for the tail; frees the one it replaces, if any.
  void recycle(segment* empty) noexcept { delete spare_.exchange(empty, std::memory_order_acq_rel); }

  // As maybe_nonempty_relaxed(), but it reads the producer's line only when the tasks last seen
  // there have all been taken: a busy worker's poll stays in the head's line.
  bool maybe_nonempty_hint() const noexcept {
    const std::uint64_t popped = head_.popped.load(std::memory_order_relaxed);
    return popped != head_.known_pushed.load(std::memory_order_relaxed) ||
           popped != pushed_.value.load(std::memory_order_relaxed);
  }

  // Each end on its own cache line: a producer's lock and index stay in the producer's cache,
  // and everything a worker touches to take a task (lock, position, popped count, its snapshot
  // of pushed_) is one line, so the critical section moves one line between workers, not four.
  struct alignas(detail::cache_line) tail_end {
    explicit tail_end(segment* s) : seg(s) {}
    pools::spinlock mutex;
    segment* seg;
    std::size_t index = 0;
  };
  struct alignas(detail::cache_line) head_end {
    explicit head_end(segment* s) : seg(s) {}
    pools::spinlock mutex;
    segment* seg;
    std::size_t index = 0;
    // Written under the head lock; read without it by monitors (size()) and pollers.
    std::atomic<std::uint64_t> popped{0};
    // The last value of pushed_ read under the head lock: tasks below it are published. Atomic
    // only because maybe_nonempty_hint() reads it without the lock.
    std::atomic<std::uint64_t> known_pushed{0};
  };
  struct alignas(detail::cache_line) counter {
    std::atomic<std::uint64_t> value{0};
  };

  tail_end tail_;
  counter pushed_;  // written under the tail lock; read by workers (their line, not the lock's)
  head_end head_;
  alignas(detail::cache_line) std::atomic<segment*> spare_{nullptr};
};

}  // namespace pools::futures
