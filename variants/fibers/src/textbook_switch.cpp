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
// Who owns a fiber's stack, and when it is freed: run() mallocs it (256 KiB) the first time the
// fiber runs, not when it is spawned, so a queued fiber costs a heap node, not a stack. A stack
// costs address space, not memory: only the pages a fiber touches are backed. No guard page: each
// would cost a kernel mapping, of which Linux allows ~65,000 per process. The stack lives while
// the fiber runs or is suspended. When the fiber's function returns, Boost switches to `home` and
// frees the stack from there (a stack cannot free itself while it is in use); run() then finds
// `self` empty and deletes the rest of the context.
//
// Sanitizers: the switch_annotations calls tell ASan and TSan about each switch
// (src/switch_annotations.hpp; they do nothing in other builds). This file is compiled WITHOUT
// instrumentation (CMakeLists.txt): Boost's resume() is entered on one stack and returns on
// another, and TSan would push its call-stack entry on one fiber and pop it from another. No other
// file includes Boost.Context, so no instrumented copy of its inline functions exists. The pool
// logic, in the header, stays instrumented: that is what the sanitizers are there to check.
#include <pools/fibers/textbook_pool.hpp>

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/preallocated.hpp>

#include "switch_annotations.hpp"

namespace pools::fibers::textbook_detail {

namespace bctx = boost::context;
namespace annotate = switch_annotations;

struct context {
  bctx::fiber self;  // the fiber's registers while it is suspended (empty while it runs)
  bctx::fiber home;  // the registers of the worker loop that runs it, while it runs
  annotate::stack self_stack, home_stack;
};

bool run(fiber& f) {
  if (f.ctx == nullptr) {  // the first run: a stack, with the function below ready to start on it
    context& c = *(f.ctx = new context);
    bctx::fixedsize_stack allocator(256 * 1024);
    bctx::stack_context stack = allocator.allocate();
    c.self_stack = annotate::new_stack(static_cast<char*>(stack.sp) - stack.size, stack.size);
    c.self = bctx::fiber(std::allocator_arg, bctx::preallocated(stack.sp, stack.size, stack), allocator,
                         [&f, &c = c](bctx::fiber&& home) {  // runs on the new stack
                           annotate::after_switch(c.self_stack, &c.home_stack);
                           c.home = std::move(home);
                           f.body();          // never throws: spawn() catches into the promise
                           f.body = nullptr;  // the task's captures die here, on the fiber, lock-free
                           annotate::before_switch(nullptr, c.home_stack);
                           return std::move(c.home);  // Boost switches there and frees this stack there
                         });
  }
  context& c = *f.ctx;
  current = &f;
  annotate::before_switch(&c.home_stack, c.self_stack);
  c.self = std::move(c.self).resume();  // f runs until it calls suspend() or returns
  annotate::after_switch(c.home_stack, nullptr);
  current = nullptr;
  if (c.self) return true;  // suspended: c.self holds its registers
  annotate::end_stack(c.self_stack);
  delete std::exchange(f.ctx, nullptr);  // ended: its stack is already freed
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
