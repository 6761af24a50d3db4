// SPDX-License-Identifier: MIT
// src/textbook_switch.cpp — how the textbook pool moves a thread from one stack to another.
//
// boost::context::fiber is the switch. Made from a stack and a function, it holds a context that
// has not started; `x = std::move(x).resume()` saves the running code's callee-saved registers on
// its own stack, loads the ones saved on x's stack and goes on there. When someone switches back,
// resume() returns THEIR saved registers, as a new fiber object: the way back to them. A fiber's
// context keeps two of these, and the pool has exactly two switches:
//   run()      worker loop -> fiber   (on the worker thread's own stack); keeps the way back in `self`
//   suspend()  fiber -> worker loop   (on the fiber's stack); keeps the way back in `home`
// run() returns only once the fiber has switched back (or ended), so work() (textbook_pool.hpp)
// can give it to another thread without it ever running on two at once.
//
// Who owns a fiber's stack, and when it is freed: it is part of the fiber's context (256 KiB),
// which run() allocates the first time the fiber runs, not when it is spawned, so a queued fiber
// costs a heap node, not a stack. A stack costs address space, not memory: only the pages a fiber
// touches are backed. No guard page: each would cost a kernel mapping, of which Linux allows
// ~65,000 per process. The context lives while the fiber runs or is suspended. When the fiber's
// function returns, Boost switches to `home`; run() then finds `self` empty and deletes the
// context, stack and all (a stack cannot free itself while it is in use). Out of memory for it,
// run() gives the fiber's body the std::bad_alloc instead (textbook_pool.hpp, RESULTS).
//
// Sanitizers: the switch_annotations calls tell ASan and TSan about each switch
// (src/switch_annotations.hpp; they do nothing in other builds). This file is compiled WITHOUT
// instrumentation (CMakeLists.txt): Boost's resume() is entered on one stack and returns on
// another, and TSan would push its call-stack entry on one fiber and pop it from another. No other
// file includes Boost.Context, so no instrumented copy of its inline functions exists. The pool
// logic, in the header, stays instrumented: that is what the sanitizers are there to check.
#include <pools/fibers/textbook_pool.hpp>

#include <boost/context/fiber.hpp>  // with preallocated, the stack a fiber is made on

#include "switch_annotations.hpp"

namespace pools::fibers::textbook_detail {

namespace bctx = boost::context;
namespace annotate = switch_annotations;

// What Boost calls to free a stack when its fiber returns: nothing, the context owns it.
struct stack_in_context {
  static void deallocate(bctx::stack_context& /*stack*/) noexcept {}
};

// A fiber's stack and the registers of both sides of its switches: one allocation. Made, the
// function below is ready to start on the stack at the first resume(); it has not started yet.
// `stack` is left as it is (NOLINT): zeroing 256 KiB would touch, and so back with memory, every page.
struct context {              // NOLINT(cppcoreguidelines-pro-type-member-init)
  explicit context(fiber& f)  // NOLINT(cppcoreguidelines-pro-type-member-init)
      : self(std::allocator_arg, bctx::preallocated(stack + sizeof stack, sizeof stack, {}),
             stack_in_context{}, [&f, this](bctx::fiber&& from) {  // runs on the new stack
               annotate::after_switch(self_stack, &home_stack);
               home = std::move(from);
               // Takes the task out of f and runs it (it never throws: promised_task and
               // reporting_task catch); its captures die at the end of the line, on the fiber.
               std::exchange(f.body, nullptr)(nullptr);
               annotate::before_switch(nullptr, home_stack);
               return std::move(home);  // Boost switches back there
             }) {}
  std::byte stack[256 * 1024];  // the fiber's stack: never zeroed
  annotate::stack self_stack = annotate::new_stack(stack, sizeof stack), home_stack;
  // self: the fiber's registers while it is suspended (empty while it runs); home: the
  // registers of the worker loop that runs it, while it runs.
  bctx::fiber self, home;
};

bool run(fiber& f) {
  // The first run makes the context. Out of memory there, no caller waits: the fiber's result
  // (or the report of a posted one) says why, and the fiber ends, unrun.
  // NOLINTNEXTLINE(bugprone-assignment-in-if-condition): make it, and test that it was made
  if (f.ctx == nullptr && (f.ctx = new (std::nothrow) context(f)) == nullptr) {
    f.body(std::make_exception_ptr(std::bad_alloc()));
    return false;
  }
  context& c = *f.ctx;
  current = &f;
  annotate::before_switch(&c.home_stack, c.self_stack);
  c.self = std::move(c.self).resume();  // f runs until it calls suspend() or returns
  annotate::after_switch(c.home_stack, nullptr);
  current = nullptr;
  if (c.self) return true;  // suspended: c.self holds its registers
  annotate::end_stack(c.self_stack);
  delete std::exchange(f.ctx, nullptr);  // ended: its stack goes with it
  return false;
}

void suspend(fiber* f) {
  if (f == nullptr) return;  // yield() on a plain thread
  context& c = *f->ctx;
  POOLS_TRACE_FIBER_SUSPEND(POOLS_TRACE_ID(f));
  annotate::before_switch(&c.self_stack, c.home_stack);
  c.home = std::move(c.home).resume();                  // to the worker loop; back when a worker runs f again
  annotate::after_switch(c.self_stack, &c.home_stack);  // learns that worker's stack: maybe another
  POOLS_TRACE_FIBER_RESUME(POOLS_TRACE_ID(f));
}

}  // namespace pools::fibers::textbook_detail
