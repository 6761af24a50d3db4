// SPDX-License-Identifier: MIT
// pools/fibers/detail/continuation.hpp — the saved state of a context that is not running.
//
// It is a boost::context::fiber (one pointer: the stack pointer at which the suspended context
// saved its callee-saved registers), kept in opaque storage so that exactly one translation unit,
// src/context_switch.cpp, includes Boost.Context. That file is compiled without sanitizer
// instrumentation and tells ASan and TSan about each switch itself; if Boost.Context's inline
// functions were also instantiated in instrumented files, the linker could pick either copy
// (see the comment at the top of context_switch.cpp).
#pragma once

namespace pools::fibers::detail {

class continuation {
 public:
  continuation() noexcept = default;
  continuation(const continuation&) = delete;
  continuation& operator=(const continuation&) = delete;

  /// True while it holds a suspended context (which is then resumable exactly once).
  bool holds() const noexcept { return holds_; }

 private:
  friend struct continuation_access;  // src/context_switch.cpp
  alignas(void*) unsigned char storage_[sizeof(void*)]{};
  bool holds_ = false;
};

}  // namespace pools::fibers::detail
