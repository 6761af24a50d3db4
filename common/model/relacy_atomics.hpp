// SPDX-License-Identifier: MIT
// relacy_atomics.hpp — the Atomics policy of pools/chase_lev_deque.hpp implemented with Relacy.
//
// Relacy (Dmitry Vyukov's relacy race detector, Debian relacy-dev) runs the threads of a test as
// fibers under its own scheduler and simulates the C++ memory model: a relaxed load may return any
// value the model allows, not just the latest. Its atomics want a debug_info argument on every
// call; this adapter keeps std::atomic's member names and fills that argument from the caller's
// position, so the deque source compiles unchanged against it.
#pragma once

// Standard headers first: Relacy's macros (new, delete, memory_order_*) would break them.
// clang-format off
#include <atomic>
#include <relacy/relacy.hpp>
// clang-format on

// Relacy defines std::memory_order_* as macros for its own std:: emulation, which this adapter
// does not use: it maps the real std::memory_order values itself. (Relacy also defines `new`,
// `delete` and `assert` as macros, so this file and the test below avoid `= delete`.)
#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst

namespace pools::model {

inline rl::memory_order to_rl(std::memory_order mo) {
  switch (mo) {
    case std::memory_order_relaxed:
      return rl::mo_relaxed;
    case std::memory_order_consume:
      return rl::mo_consume;
    case std::memory_order_acquire:
      return rl::mo_acquire;
    case std::memory_order_release:
      return rl::mo_release;
    case std::memory_order_acq_rel:
      return rl::mo_acq_rel;
    default:
      return rl::mo_seq_cst;
  }
}

// The caller's position, for Relacy's reports. (Like std::source_location, which Clang 14 cannot
// provide with libstdc++ 12: the builtins in default arguments take the caller's position.)
struct call_site {
  call_site(const char* func = __builtin_FUNCTION(), const char* file = __builtin_FILE(),
            unsigned line = __builtin_LINE())
      : func_(func), file_(file), line_(line) {}
  const char* func_;
  const char* file_;
  unsigned line_;
};

inline rl::debug_info where(const call_site& loc) {
  return rl::debug_info(loc.func_, loc.file_, loc.line_);
}

struct relacy_atomics {
  template <class T>
  class atomic {
   public:
    // Like std::atomic<T>() since C++20: value-initialised. (A slot a thief reads and then
    // discards, because its CAS fails, is then not reported as an uninitialised read.)
    atomic() { a_.store(T{}, rl::mo_relaxed, RL_INFO); }

    T load(std::memory_order mo, call_site loc = call_site()) const { return a_.load(to_rl(mo), where(loc)); }
    void store(T v, std::memory_order mo, call_site loc = call_site()) { a_.store(v, to_rl(mo), where(loc)); }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                 call_site loc = call_site()) {
      return a_.compare_exchange_strong(expected, desired, to_rl(success), where(loc), to_rl(failure),
                                        where(loc));
    }
    // Read-modify-writes for the parking models (park_*_model.cpp); the deque needs none of them.
    // compare_exchange_weak may fail spuriously, as the real one may.
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               call_site loc = call_site()) {
      return a_.compare_exchange_weak(expected, desired, to_rl(success), where(loc), to_rl(failure),
                                      where(loc));
    }
    T exchange(T v, std::memory_order mo, call_site loc = call_site()) {
      return a_.exchange(v, to_rl(mo), where(loc));
    }
    T fetch_add(T v, std::memory_order mo, call_site loc = call_site()) {
      return a_.fetch_add(v, to_rl(mo), where(loc));
    }
    T fetch_sub(T v, std::memory_order mo, call_site loc = call_site()) {
      return a_.fetch_sub(v, to_rl(mo), where(loc));
    }
    T fetch_or(T v, std::memory_order mo, call_site loc = call_site()) {
      return a_.fetch_or(v, to_rl(mo), where(loc));
    }
    T fetch_and(T v, std::memory_order mo, call_site loc = call_site()) {
      return a_.fetch_and(v, to_rl(mo), where(loc));
    }

   private:
    rl::atomic<T> a_;
  };

  static void thread_fence(std::memory_order mo, call_site loc = call_site()) {
    rl::atomic_thread_fence(to_rl(mo), where(loc));
  }
};

}  // namespace pools::model
