// SPDX-License-Identifier: MIT
// pools/fibers/detail/task.hpp — a spawned or posted callable, its result, and the join protocol.
//
// A task is *not* a fiber. It is a heap object holding the callable; it only gets a stack of its
// own if it (or something it runs inline) has to wait while the worker has other work. Two
// owners share it, counted in `refs`: the scheduler queue entry and the join_handle.
//
// `claimed` decides who runs it: the worker that pops/steals it, or the joiner, who may run an
// unstarted child inline rather than suspending (posted tasks have no joiner and skip the claim).
//
// `state` is the join rendezvous, one word: done_bit when the result is stored, detached_bit when
// no one will join, otherwise 0 or the address of the joiner's waiter.
#pragma once

#include <pools/fibers/detail/task_allocator.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace pools::fibers::detail {

class scheduler;

struct task_base {
  static constexpr std::uintptr_t done_bit = 1;
  static constexpr std::uintptr_t detached_bit = 2;
  static constexpr std::uintptr_t flag_bits = done_bit | detached_bit;

  using run_fn = void (*)(task_base&) noexcept;      // calls the callable, stores result or error
  using destroy_fn = void (*)(task_base*) noexcept;  // deletes the most-derived object

  task_base(scheduler& s, run_fn r, destroy_fn d, bool join) noexcept
      : run(r), destroy(d), owner(&s), refs(join ? 2 : 1), joinable(join), state(join ? 0 : detached_bit) {}
  task_base(const task_base&) = delete;
  task_base& operator=(const task_base&) = delete;

  // Every task type allocates through the per-thread task cache (task_allocator.hpp).
  static void* operator new(std::size_t bytes) { return allocate_task(bytes); }
  static void operator delete(void* p, std::size_t bytes) noexcept { deallocate_task(p, bytes); }

  run_fn run;
  destroy_fn destroy;
  scheduler* owner;
  std::atomic<std::uint32_t> refs;
  const bool joinable;
  std::atomic<bool> claimed{false};
  std::atomic<std::uintptr_t> state;
  std::exception_ptr error;
};

/// Drops one reference. The load short-cut avoids the atomic RMW when this holder is visibly
/// the last one (the common case after an inline join): if refs reads 1, no one else holds it,
/// and acquire pairs with the release half of the other holder's decrement.
inline void release(task_base* t) noexcept {
  if (t->refs.load(std::memory_order_acquire) == 1 || t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    t->destroy(t);
  }
}

/// The part of a task a join_handle<R> can see: the result, whatever the callable's type.
template <class R>
struct task_with_result : task_base {
  using task_base::task_base;
  using stored_type =
      std::conditional_t<std::is_reference_v<R>, std::reference_wrapper<std::remove_reference_t<R>>,
                         std::conditional_t<std::is_void_v<R>, bool, R>>;
  std::optional<stored_type> result;
};

/// `rvalue_call`: spawn calls the decayed callable once as an rvalue, like std::thread; post
/// calls it as an lvalue, like every other pools executor (pools::invoke_reporting).
template <class F, class R, bool rvalue_call>
struct task final : task_with_result<R> {
  template <class G>
  task(scheduler& s, bool join, G&& g) : task_with_result<R>(s, &run_impl, &destroy_impl, join) {
    ::new (static_cast<void*>(&fn_)) F(std::forward<G>(g));
  }
  ~task() {
    if (alive_) fn_.~F();
  }

 private:
  static void run_impl(task_base& b) noexcept {
    auto& t = static_cast<task&>(b);
    try {
      if constexpr (std::is_void_v<R>) {
        call(t.fn_);
        t.result.emplace(true);
      } else {
        t.result.emplace(call(t.fn_));
      }
    } catch (...) {
      t.error = std::current_exception();
    }
    // The callable's captures are released as soon as it has run, not when the last handle
    // goes: a task that owned a big buffer or a lock guard must not keep it until someone joins.
    t.fn_.~F();
    t.alive_ = false;
  }
  static decltype(auto) call(F& f) {
    if constexpr (rvalue_call) {
      return std::invoke(std::move(f));
    } else {
      return std::invoke(f);
    }
  }
  static void destroy_impl(task_base* b) noexcept { delete static_cast<task*>(b); }

  union {
    F fn_;
  };
  bool alive_ = true;
};

}  // namespace pools::fibers::detail
