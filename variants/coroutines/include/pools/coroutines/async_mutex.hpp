// SPDX-License-Identifier: MIT
// pools/coroutines/async_mutex.hpp — a mutex whose lock() suspends the coroutine, not the thread.
//
//   async_mutex m;
//   {
//     auto guard = co_await m.scoped_lock();   // unlocked when guard goes out of scope
//     ... critical section (may itself co_await) ...
//   }
//
// Lock-free (the cppcoro design). One atomic word holds `not_locked`, `locked_no_waiters`, or the
// head of a LIFO stack of newly arrived waiters. The holder also owns a private FIFO list: on
// unlock() it hands the lock directly to the oldest waiter (no barging: the lock is never free
// while waiters exist), refilling the FIFO by reversing the LIFO stack when it runs dry. The new
// holder is handed back to its pool (detail/resumer.hpp), not run inside unlock().
//
// Cancellation (stop_token.hpp): a lock() in a task under a stoppable token throws
// operation_cancelled when the token is stopped before the lock is handed to it (a free lock is
// taken at once, whatever the token). Such a waiter cannot leave the stack or the FIFO early, so it
// queues a small heap node in its place, in the same order as any waiter (no barging). unlock()
// and the stop callback race for the node with one CAS on its state (waiting -> granted, or
// waiting -> cancelled): the winner decides, and unlock() skips a cancelled node and hands the
// lock to the next waiter. The coroutine is resumed by the second of two arrivals — the decision,
// and the end of await_suspend — as in offload.hpp; the node is freed by the last of its two
// owners (the queue and the waiter).
#pragma once

#include <pools/coroutines/detail/resumer.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/task.hpp>

#include <atomic>
#include <cassert>
#include <coroutine>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <utility>

namespace pools::coroutines {

class async_mutex;

/// Owns a locked async_mutex; unlocks it on destruction.
class [[nodiscard]] async_mutex_lock {
 public:
  explicit async_mutex_lock(async_mutex& m, std::adopt_lock_t) noexcept : mutex_(&m) {}
  async_mutex_lock(async_mutex_lock&& other) noexcept : mutex_(std::exchange(other.mutex_, nullptr)) {}
  async_mutex_lock& operator=(async_mutex_lock&&) = delete;
  async_mutex_lock(const async_mutex_lock&) = delete;
  ~async_mutex_lock();

 private:
  async_mutex* mutex_;
};

class async_mutex {
 public:
  async_mutex() noexcept = default;
  async_mutex(const async_mutex&) = delete;
  async_mutex& operator=(const async_mutex&) = delete;
  ~async_mutex() { assert(state_.load(std::memory_order_relaxed) == not_locked && "destroyed while locked"); }

  /// Takes the lock if it is free; never suspends.
  bool try_lock() noexcept {
    std::uintptr_t expected = not_locked;
    // acquire on success: the previous holder's unlock (release) happens-before our section.
    return state_.compare_exchange_strong(expected, locked_no_waiters, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }

  class lock_awaiter {
   public:
    explicit lock_awaiter(async_mutex& m) noexcept : mutex_(m) {}
    lock_awaiter(const lock_awaiter&) = delete;  // queued by address
    lock_awaiter& operator=(const lock_awaiter&) = delete;
    // On the simulator not even a free lock is taken here: the lock is a scheduling point
    // (detail/resumer.hpp), so await_suspend defers it to the coroutine's next step.
    bool await_ready() noexcept { return !detail::simulated_here() && mutex_.try_lock(); }
    template <class Promise>
    bool await_suspend(std::coroutine_handle<Promise> h) {
      if (detail::defer(h, "async_mutex lock", [this, h] { return attempt(h); })) return true;
      return attempt(h);
    }
    /// Throws operation_cancelled when the task's stop token was stopped before the lock was
    /// handed over (the lock is then not held).
    void await_resume();

   protected:
    async_mutex& mutex_;

   private:
    friend class async_mutex;
    struct cancellable_node;
    struct on_stop {
      cancellable_node* node;
      void operator()() const noexcept;
    };

    // await_suspend's work: takes the lock (false: go on) or queues this waiter (true: suspended).
    template <class Promise>
    bool attempt(std::coroutine_handle<Promise> h) {
      resumer_.capture(h, "async_mutex", &mutex_);
      const std::stop_token* token = detail::stop_token_of(h);
      if (token != nullptr && token->stop_possible()) [[unlikely]]
        return suspend_cancellable(*token);
      if (!push(this)) return resumer_.not_suspended();  // the lock was free after all: we hold it
      return true;
    }

    // Pushes `node` onto the mutex's stack of new waiters; false if the lock was free and is now
    // ours instead (nothing pushed).
    bool push(lock_awaiter* node) noexcept {
      // relaxed: the CAS below decides; its orders are the ones that matter.
      std::uintptr_t old = mutex_.state_.load(std::memory_order_relaxed);
      for (;;) {
        if (old == not_locked) {
          // acquire on success: as in try_lock(). We hold the lock and do not suspend.
          if (mutex_.state_.compare_exchange_weak(old, locked_no_waiters, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
            return false;
          }
        } else {
          node->next_ = reinterpret_cast<lock_awaiter*>(old == locked_no_waiters ? 0 : old);
          // release on success: unlock() (acquire) reads next_ and resumer_ written above.
          if (mutex_.state_.compare_exchange_weak(old, reinterpret_cast<std::uintptr_t>(node),
                                                  std::memory_order_release, std::memory_order_relaxed)) {
            return true;
          }
        }
      }
    }

    bool suspend_cancellable(const std::stop_token& token);

    lock_awaiter* next_ = nullptr;
    detail::resumer resumer_;
    cancellable_node* node_ = nullptr;  // a wait under a stoppable token: its queued node
    bool is_node_ = false;              // this object is a cancellable_node (queued by a waiter)
  };

  class scoped_lock_awaiter : public lock_awaiter {
   public:
    using lock_awaiter::lock_awaiter;
    async_mutex_lock await_resume() {
      lock_awaiter::await_resume();  // throws if cancelled (the lock is not held)
      return async_mutex_lock(mutex_, std::adopt_lock);
    }
  };

  /// `co_await m.lock()` returns once the lock is held; pair with unlock().
  lock_awaiter lock() noexcept { return lock_awaiter{*this}; }
  /// `auto g = co_await m.scoped_lock()` holds the lock until g is destroyed.
  scoped_lock_awaiter scoped_lock() noexcept { return scoped_lock_awaiter{*this}; }

  /// Releases the lock, or hands it to the oldest waiter. Must be called by the holder.
  void unlock();

 private:
  friend class lock_awaiter;
  static constexpr std::uintptr_t not_locked = 1;
  static constexpr std::uintptr_t locked_no_waiters = 0;
  std::atomic<std::uintptr_t> state_{not_locked};
  lock_awaiter* waiters_ = nullptr;  // FIFO of waiters; touched only by the lock holder
};

// A cancellable waiter's place in the queue: on the heap, as it may be skipped long after its
// coroutine has gone on. Owned by two (the queue, until unlock() reaches it; the waiter, until its
// await_resume): the second to let go frees it.
struct async_mutex::lock_awaiter::cancellable_node final : lock_awaiter {
  cancellable_node(async_mutex& m, const detail::resumer& r) : lock_awaiter(m) {
    resumer_ = r;
    is_node_ = true;
  }
  static constexpr int waiting = 0, granted_state = 1, cancelled_state = 2;

  bool granted() const noexcept {
    // relaxed: read by the waiter after it was resumed, which the decider's arrival (acq_rel)
    // ordered after the decision.
    return state.load(std::memory_order_relaxed) == granted_state;
  }
  /// unlock(): true when the lock is now the waiter's (and it is resumed once await_suspend is
  /// done); false when the stop callback cancelled it first. Either way the queue lets go.
  bool grant() noexcept {
    int expected = waiting;
    // relaxed: the CAS only decides between grant() and cancel() (read-modify-writes of one atomic
    // are totally ordered: exactly one succeeds). The critical section reaches the new holder
    // through the arrival (acq_rel) and the resume, as the decision does.
    const bool won = state.compare_exchange_strong(expected, granted_state, std::memory_order_relaxed);
    if (won) arrive();
    release(this);
    return won;
  }
  /// The stop callback: the waiter gives up, unless unlock() granted it the lock first.
  void cancel() noexcept {
    int expected = waiting;
    // relaxed: as in grant(); the arrival below orders the decision before the resume.
    if (state.compare_exchange_strong(expected, cancelled_state, std::memory_order_relaxed)) arrive();
  }
  /// One of the two arrivals (the decision; the end of await_suspend): the second resumes.
  /// acq_rel: the second sees all the first did (await_suspend's last touch of the frame, or the
  /// decision), and what the resumed coroutine reads is ordered before its resume.
  bool arrive() noexcept {
    if (arrivals.fetch_add(1, std::memory_order_acq_rel) != 1) return false;
    resumer_.resume();
    return true;
  }
  static void release(cancellable_node* n) noexcept {
    // acq_rel: the last owner sees every write of the other before it frees the node.
    if (n->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) delete n;
  }

  std::atomic<int> state{waiting};
  std::atomic<int> arrivals{0};
  std::atomic<int> owners{2};
  std::optional<std::stop_callback<on_stop>> callback;  // registered after the node is queued
};

inline bool async_mutex::lock_awaiter::suspend_cancellable(const std::stop_token& token) {
  if (token.stop_requested()) {  // the lock is held by another: give up without queueing
    node_ = new cancellable_node(mutex_, resumer_);
    node_->state.store(cancellable_node::cancelled_state, std::memory_order_relaxed);
    node_->owners.store(1, std::memory_order_relaxed);  // never queued: the waiter alone owns it
    return resumer_.not_suspended();
  }
  auto* node = new cancellable_node(mutex_, resumer_);
  if (!push(node)) {  // the lock was free after all: we hold it, no node needed
    delete node;
    return resumer_.not_suspended();
  }
  node_ = node;
  // Registered after the push: if the token is stopped by now, on_stop runs here and cancels
  // the node (unless unlock() granted it already); its arrival is then the first, and ours below
  // the second, so we go on without suspending.
  node->callback.emplace(token, on_stop{node});
  // Our arrival (see arrive()): first, suspend — the decider resumes us; second, the decision is
  // made already: go on without suspending.
  if (node->arrivals.fetch_add(1, std::memory_order_acq_rel) == 0) return true;
  return resumer_.not_suspended();
}

inline void async_mutex::lock_awaiter::await_resume() {
  if (node_ == nullptr) [[likely]]
    return;
  node_->callback.reset();  // waits for a callback still running elsewhere
  const bool granted = node_->granted();
  cancellable_node::release(std::exchange(node_, nullptr));
  if (!granted) throw operation_cancelled();
}

inline void async_mutex::lock_awaiter::on_stop::operator()() const noexcept {
  node->cancel();
}

inline void async_mutex::unlock() {
  assert(state_.load(std::memory_order_relaxed) != not_locked && "unlock of an unlocked async_mutex");
  for (;;) {
    lock_awaiter* head = waiters_;
    if (head == nullptr) {
      std::uintptr_t expected = locked_no_waiters;
      // release: publishes the critical section to the next holder's acquire.
      if (state_.compare_exchange_strong(expected, not_locked, std::memory_order_release,
                                         std::memory_order_relaxed)) {
        return;
      }
      // New waiters arrived. acquire: pairs with their release pushes (next_, resumer_ readable).
      std::uintptr_t stack = state_.exchange(locked_no_waiters, std::memory_order_acquire);
      auto* w = reinterpret_cast<lock_awaiter*>(stack);
      while (w != nullptr) {  // reverse the LIFO stack into FIFO order
        lock_awaiter* next = w->next_;
        w->next_ = head;
        head = w;
        w = next;
      }
    }
    waiters_ = head->next_;
    // A cancellable waiter's node: granted, the lock is its; cancelled, it is skipped and the
    // lock, still ours, goes to the next waiter (or becomes free) on the next round.
    if (head->is_node_) [[unlikely]] {
      if (static_cast<lock_awaiter::cancellable_node*>(head)->grant()) return;
      continue;
    }
    // The lock passes to `head` without becoming free. The critical section is published to it
    // by the pool's queue (a release push / mutex) between this thread and the one resuming it.
    head->resumer_.resume();
    return;
  }
}

inline async_mutex_lock::~async_mutex_lock() {
  if (mutex_ != nullptr) mutex_->unlock();
}

}  // namespace pools::coroutines
