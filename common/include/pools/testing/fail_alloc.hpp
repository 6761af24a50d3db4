// SPDX-License-Identifier: MIT
// pools/testing/fail_alloc.hpp — make the k-th allocation from now fail (SQLite's out-of-memory
// testing), for the fault tests of every pool.
//
//   {
//     pools::testing::fail_allocation armed(k);  // the k-th operator new from here throws
//     pool.post(task);                           // the operation under test, and nothing else
//   }                                            // disarmed: later allocations succeed
//
// How: common/testing/fail_alloc.cpp replaces the global operator new and new[] (every
// overload: plain, aligned, nothrow) with versions that count down while armed. It is linked
// only into the fault test binaries (faults_<variant>, faults_server: the pools_fault_injection
// object library), never into a library, so no shipped program pays for the check.
//
// Which allocations count. A pool allocates on the caller's thread (a queue node, a promise) and
// on its workers (a timer batch, a fiber, a channel buffer), so an armed scope says which:
//   this_thread  only the arming thread's allocations count down. Deterministic: the same k hits
//                the same allocation on every run, which is what makes the k-loop exhaustive.
//   any_thread   every thread's allocations count down (one shared counter). The k-th one is
//                then whichever thread gets there first, so a run is not repeatable, but a
//                failure inside a worker — where no caller is waiting to catch it — is reached.
// The injected failure is one-shot: the allocations after it succeed again, so the test checks
// recovery from one failure (SQLite's "transient" mode).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pools::testing {

enum class alloc_scope { this_thread, any_thread };

/// Arms the countdown for the lifetime of the object: the k-th allocation (k >= 1) of the given
/// scope fails with std::bad_alloc (a nothrow overload returns nullptr). Not nestable.
class fail_allocation {
 public:
  explicit fail_allocation(std::uint64_t k, alloc_scope scope = alloc_scope::this_thread) noexcept;
  ~fail_allocation();
  fail_allocation(const fail_allocation&) = delete;
  fail_allocation& operator=(const fail_allocation&) = delete;

  /// True once the armed failure has been injected.
  bool fired() const noexcept;

 private:
  alloc_scope scope_;
  std::uint64_t failures_before_;
};

/// Allocation failures injected so far in this process (any scope).
std::uint64_t injected_allocation_failures() noexcept;

/// Allocations of any thread since the process started (a replaced operator new counts each).
std::uint64_t allocations() noexcept;

}  // namespace pools::testing
