// SPDX-License-Identifier: MIT
// src/switch_annotations.hpp — what AddressSanitizer and ThreadSanitizer must be told when a
// thread moves from one stack to another. Boost.Context switches in assembly and tells them
// nothing; without these calls ASan mistakes a fiber's stack for garbage when an exception
// unwinds on it ("ignoring requested __asan_handle_no_return ... false positive error reports may
// follow"), and TSan mixes the call stacks of fibers that share a thread.
//
// Only a file compiled WITHOUT sanitizer instrumentation may include this header and switch
// (src/textbook_switch.cpp; see its comment and CMakeLists.txt). In builds without POOLS_ASAN /
// POOLS_TSAN every function here does nothing. The tuned pool's src/context_switch.cpp makes the
// same calls, interleaved with its own switch.
//
//  * ASan: __sanitizer_start_switch_fiber(save, bounds of the target stack) right before a
//    switch; __sanitizer_finish_switch_fiber(save, &bounds of the stack we came from) right after
//    it, on the new stack. That is how a fiber learns the bounds of the worker stack it must
//    switch back to. `save` keeps the leaving stack's "fake stack" (ASan's frames for
//    use-after-return checks); a null `save` says the stack being left is finished for good.
//  * TSan: one TSan context per fiber (__tsan_create_fiber / __tsan_destroy_fiber), and
//    __tsan_switch_to_fiber right before each switch, which also orders everything before the
//    switch before everything after it.
#pragma once

#include <sanitizer/common_interface_defs.h>
#include <sanitizer/tsan_interface.h>

#include <cstddef>

#ifndef POOLS_ASAN
#define POOLS_ASAN 0
#endif
#ifndef POOLS_TSAN
#define POOLS_TSAN 0
#endif

namespace pools::fibers::switch_annotations {

/// What the sanitizers must know about one stack a thread can run on.
struct stack {
  const void* bottom = nullptr;  // [bottom, bottom + size): ASan
  std::size_t size = 0;
  void* asan_fake_stack = nullptr;  // ASan's saved fake frames while this stack is switched out
  void* tsan = nullptr;             // TSan's context for the code running on this stack
};

/// A new fiber stack [bottom, bottom + size), not started yet.
inline stack new_stack([[maybe_unused]] const void* bottom, [[maybe_unused]] std::size_t size) {
  stack s;
  if constexpr (POOLS_ASAN) s = {bottom, size, nullptr, nullptr};
  if constexpr (POOLS_TSAN) s.tsan = __tsan_create_fiber(0);
  return s;
}

/// Right before switching from `from` (the stack running now; nullptr when it is finished for
/// good) to `to`.
inline void before_switch([[maybe_unused]] stack* from, [[maybe_unused]] const stack& to) {
  if constexpr (POOLS_ASAN)
    __sanitizer_start_switch_fiber(from ? &from->asan_fake_stack : nullptr, to.bottom, to.size);
  if constexpr (POOLS_TSAN) {
    if (from != nullptr) from->tsan = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(to.tsan, 0);
  }
}

/// Right after arriving on `self`; `from`, when not null, learns the bounds of the stack the
/// switch came from.
inline void after_switch([[maybe_unused]] stack& self, [[maybe_unused]] stack* from) {
  if constexpr (POOLS_ASAN) {
    __sanitizer_finish_switch_fiber(self.asan_fake_stack, from ? &from->bottom : nullptr,
                                    from ? &from->size : nullptr);
  }
}

/// Once a fiber stack has ended for good (called from another stack).
inline void end_stack([[maybe_unused]] stack& s) {
  if constexpr (POOLS_TSAN) __tsan_destroy_fiber(s.tsan);
}

}  // namespace pools::fibers::switch_annotations
