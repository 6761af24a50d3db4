// SPDX-License-Identifier: MIT
// src/context_switch.cpp — the only code that moves a worker thread from one stack to another.
//
// What a switch is: the running code saves the callee-saved registers (rbx, rbp, r12-r15 on
// x86-64, plus the SSE/x87 control words) on its own stack, stores the resulting stack pointer,
// loads the target's saved stack pointer, pops the target's registers and returns into the
// target's code. Boost.Context's jump_fcontext does exactly that in ~20 instructions; the
// caller-saved registers need no saving because the switch is an ordinary function call to the
// compiler. boost::context::fiber wraps it: resume() switches, and returns the context that
// switched back to us, as a new fiber object.
//
// Sanitizers. Debian's Boost.Context is built with the fcontext (assembly) backend, which tells
// no sanitizer about switches; its ucontext backend knows ASan (BOOST_USE_ASAN) but needs a
// libboost_context built for it (the package's lacks fiber_activation_record::current()), has no
// TSan support in 1.74, and costs a sigprocmask system call per switch. So we keep fcontext and
// annotate every switch here ourselves:
//  * ASan: __sanitizer_start_switch_fiber(save, bottom, size) before, with the target stack's
//    bounds; __sanitizer_finish_switch_fiber(save, ...) after, on the new stack. Without them ASan
//    believes it is still on the old stack and an exception thrown on a fiber makes it "unpoison"
//    the wrong range (or warn that it ignores the request).
//  * TSan: one TSan fiber per context (__tsan_create_fiber), __tsan_switch_to_fiber right before
//    each switch (it also creates the happens-before edge from the old to the new context), and
//    __tsan_destroy_fiber once a fiber is gone.
// This file is compiled *without* sanitizer instrumentation (see CMakeLists.txt): TSan keeps a
// shadow call stack per context, pushed and popped by every instrumented function's entry and
// exit. Code that runs between "switch to fiber" and the actual jump — Boost's resume(), its
// entry trampoline, the return from a finishing fiber — would push onto one context's shadow
// stack and pop from another's, and the imbalance grows with every switch and fiber. Here no
// function is instrumented, so only the annotations speak. For the same reason no other file
// includes Boost.Context: an inline Boost function instantiated in an instrumented file could be
// the copy the linker keeps.
#include <boost/context/fiber.hpp>
#include <boost/context/preallocated.hpp>
#include <boost/context/stack_context.hpp>
#include <cxxabi.h>

#include <cassert>
#include <cstdlib>
#include <new>
#include <utility>

#include "scheduler.hpp"

#if defined(POOLS_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(POOLS_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace pools::fibers::detail {

namespace bctx = boost::context;

// A layout check; trivially true where a Boost.Context fiber is one pointer.
// NOLINTNEXTLINE(misc-redundant-expression)
static_assert(sizeof(bctx::fiber) <= sizeof(void*) && alignof(bctx::fiber) <= alignof(void*),
              "continuation's storage must fit a boost::context::fiber");

struct continuation_access {
  static void put(continuation& c, bctx::fiber&& f) noexcept {
    assert(!c.holds_);
    ::new (static_cast<void*>(c.storage_)) bctx::fiber(std::move(f));
    c.holds_ = true;
  }
  static bctx::fiber take(continuation& c) noexcept {
    assert(c.holds_);
    auto* p = std::launder(reinterpret_cast<bctx::fiber*>(c.storage_));
    bctx::fiber f = std::move(*p);
    p->~fiber();
    c.holds_ = false;
    return f;
  }
};

namespace {

// The Itanium C++ ABI's per-thread exception state (libsupc++ and libc++abi alike): the stack of
// exceptions being handled and the count of uncaught ones. __cxa_get_globals is declared
// __attribute__((const)), so the compiler may reuse one call's result within a function; each
// direction therefore lives in its own non-inlined function, called on the thread it concerns.
struct cxa_eh_globals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

[[gnu::noinline]] void save_exception_state(context& c) noexcept {
  auto* g = reinterpret_cast<cxa_eh_globals*>(abi::__cxa_get_globals());
  c.eh.caught = g->caught_exceptions;
  c.eh.uncaught = g->uncaught_exceptions;
}

[[gnu::noinline]] void restore_exception_state(const context& c) noexcept {
  auto* g = reinterpret_cast<cxa_eh_globals*>(abi::__cxa_get_globals());
  g->caught_exceptions = c.eh.caught;
  g->uncaught_exceptions = c.eh.uncaught;
}

// Where a fiber's record sits: at the top of its own stack, cache-line aligned.
constexpr std::size_t record_space = (sizeof(fiber_record) + 63) & ~std::size_t{63};

fiber_record* record_of(const bctx::stack_context& sctx) noexcept {
  return std::launder(reinterpret_cast<fiber_record*>(static_cast<std::byte*>(sctx.sp) - record_space));
}

// Runs on the context just switched to: file the continuation of the context that left, then
// do what it asked to be done once it was safely saved (publish it to a waker, unlock, ...).
void land(bctx::fiber&& previous, [[maybe_unused]] const void* bottom,
          [[maybe_unused]] std::size_t size) noexcept {
  worker& w = *current_worker();
  context* from = std::exchange(w.pending_from, nullptr);
  const post_switch_action action = std::exchange(w.pending_action, {});
  if (from != nullptr) {
    continuation_access::put(from->cont, std::move(previous));
#if defined(POOLS_ASAN)
    from->stack_bottom = bottom;  // how the home context's bounds become known
    from->stack_size = size;
#endif
  }
  // else the previous context was a fiber that ended; Boost has already freed its stack.
  if (action.fn != nullptr) action.fn(from, action.arg);
}

// Boost calls deallocate() when a fiber's function returns, on the stack of the context it
// returns to. allocate() is never called: every stack is handed in as `preallocated`.
struct stack_returner {
  bctx::stack_context allocate() { std::abort(); }
  void deallocate(bctx::stack_context& sctx) noexcept {
    fiber_record* rec = record_of(sctx);
    scheduler& s = *rec->owner;
    const stack_pool::stack st = rec->stack;
#if defined(POOLS_TSAN)
    __tsan_destroy_fiber(rec->tsan_fiber);
#endif
    rec->~fiber_record();
#if defined(POOLS_ASAN)
    // Frames that never returned (Boost's entry trampoline) leave their redzones poisoned; the
    // next fiber on this stack must start clean.
    __asan_unpoison_memory_region(st.base, st.size);
#endif
    s.stacks().deallocate(st);
    s.fiber_ended();
  }
};

bctx::fiber fiber_entry(fiber_record& self, bctx::fiber&& previous) noexcept {
  const void* bottom = nullptr;
  std::size_t size = 0;
#if defined(POOLS_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &bottom, &size);
#endif
  restore_exception_state(self);  // all zero: a new fiber handles no exception
  land(std::move(previous), bottom, size);

  context* next = fiber_main(self);

  // This fiber ends: leave for `next` for good. Boost then frees our stack, running
  // stack_returner::deallocate on `next`'s stack.
#if defined(POOLS_ASAN)
  __sanitizer_start_switch_fiber(nullptr, next->stack_bottom, next->stack_size);  // nullptr: dying
#endif
#if defined(POOLS_TSAN)
  __tsan_switch_to_fiber(next->tsan_fiber, 0);
#endif
  return continuation_access::take(next->cont);
}

}  // namespace

void switch_context(context& from, context& to) noexcept {
  save_exception_state(from);
#if defined(POOLS_ASAN)
  __sanitizer_start_switch_fiber(&from.asan_fake_stack, to.stack_bottom, to.stack_size);
#endif
#if defined(POOLS_TSAN)
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
  bctx::fiber previous = continuation_access::take(to.cont).resume();
  // Back in `from`: someone switched to us, maybe on another thread.
  const void* bottom = nullptr;
  std::size_t size = 0;
#if defined(POOLS_ASAN)
  __sanitizer_finish_switch_fiber(from.asan_fake_stack, &bottom, &size);
#endif
  restore_exception_state(from);
  land(std::move(previous), bottom, size);
}

fiber_record* create_fiber(scheduler& s) {
  const stack_pool::stack st = s.stacks().allocate();
  std::byte* const top = st.base + st.size;
  void* const record_memory = top - record_space;
  auto* rec = ::new (record_memory) fiber_record(s, st);
#if defined(POOLS_ASAN)
  rec->stack_bottom = st.base;
  rec->stack_size = st.size;
#endif
#if defined(POOLS_TSAN)
  rec->tsan_fiber = __tsan_create_fiber(0);
  __tsan_set_fiber_name(rec->tsan_fiber, "pools::fibers fiber");
#endif
  bctx::stack_context sctx;
  sctx.sp = top;
  sctx.size = st.size;
  // Boost places its own small record just below ours and starts the frames below that.
  const bctx::preallocated below_record(
      record_memory, static_cast<std::size_t>(static_cast<std::byte*>(record_memory) - st.base), sctx);
  bctx::fiber f(std::allocator_arg, below_record, stack_returner{},
                [rec](bctx::fiber&& previous) { return fiber_entry(*rec, std::move(previous)); });
  continuation_access::put(rec->cont, std::move(f));
  return rec;
}

// The stack goes back as stack_returner::deallocate gives it back, but Boost is not asked: its
// continuation (in the record, on the stack itself) would unwind the fiber when destroyed, and
// the fiber's frames — a simulated run that stopped in a deadlock — must not run again.
void discard_fiber(fiber_record* f) noexcept {
  scheduler& s = *f->owner;
  const stack_pool::stack st = f->stack;
#if defined(POOLS_TSAN)
  __tsan_destroy_fiber(f->tsan_fiber);
#endif
#if defined(POOLS_ASAN)
  __asan_unpoison_memory_region(st.base, st.size);
#endif
  s.stacks().deallocate(st);
  s.fiber_ended();
}

void prepare_home([[maybe_unused]] context& home) noexcept {
#if defined(POOLS_TSAN)
  home.tsan_fiber = __tsan_get_current_fiber();
#endif
}

}  // namespace pools::fibers::detail
