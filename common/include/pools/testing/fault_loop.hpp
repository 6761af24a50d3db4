// SPDX-License-Identifier: MIT
// pools/testing/fault_loop.hpp — the loops of the fault tests, once for every variant:
//
//   for_each_allocation_failure(attempt)   SQLite's loop: attempt(k) for k = 1, 2, ... with the
//                                          k-th allocation of its operation failing, until one
//                                          attempt completes with no failure injected.
//   check_allocation_failures(what, attempt)  that loop under a watchdog, for any operation.
//   check_mmap_failures(what, attempt)     the same loop with the k-th mmap failing (fail_mmap:
//                                          the fiber pools' stacks).
//   check_post_allocation_failures<Pool>   that loop around post() of any pools::Executor.
//   check_thread_start_failures<Pool>      the constructor with its n-th thread start failing,
//                                          for n = 1, 2, ... until it constructs.
//
// What every attempt checks (the promise of "faults are inputs"): the caller gets
// std::bad_alloc / std::system_error; no task is lost or run twice (each accepted task runs once,
// counted, or is reported as out of memory by a worker that could not run it; a refused one never
// runs); the pool still works (a task posted afterwards runs); its
// destructor returns (a watchdog aborts the test otherwise). Each task owns a heap block, so a
// task dropped without being destroyed is a leak that the ASan preset's LeakSanitizer reports.
// Variant tests use these for post and write their own attempts (submit, spawn, timers, ...)
// with for_each_allocation_failure.
#pragma once

#include <doctest/doctest.h>

#include <pools/testing/fail_alloc.hpp>
#include <pools/testing/fail_mmap.hpp>
#include <pools/testing/fail_thread_start.hpp>
#include <pools/testing/report_counter.hpp>
#include <pools/testing/watchdog.hpp>
#include <pools/wait_group.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace pools::testing {

using namespace std::chrono_literals;

/// Bound for every wait a working pool must finish, and for each loop as a whole.
inline constexpr auto fault_patience = 30s;
inline constexpr auto fault_loop_limit = 120s;

/// Calls attempt(k) for k = 1, 2, ...; the attempt arms fail_allocation(k, ...) around the
/// operation under test only. Stops after the first attempt in which no failure was injected:
/// the operation then made fewer than k allocations, so every one of them has been failed once.
/// Returns that k; fails the test if `limit` attempts all had a failure injected. `injected`
/// counts the failures of the injection the attempt arms (default: operator new's).
template <class Attempt>
std::uint64_t for_each_allocation_failure(
    Attempt&& attempt, std::uint64_t limit = 2000,
    std::uint64_t (*injected)() noexcept = injected_allocation_failures) {
  for (std::uint64_t k = 1; k <= limit; ++k) {
    const std::uint64_t before = injected();
    attempt(k);
    if (injected() == before) {
      MESSAGE("completed without a failure at k = " << k);
      return k;
    }
  }
  FAIL("still failing after " << limit << " attempts: the operation allocates without bound");
  return limit;
}

/// A task that counts its runs and owns a heap block (freed with the task: a task lost without
/// being destroyed leaks it, which LeakSanitizer reports) and a payload too large for any small
/// buffer, so the pool's type-erased callable allocates too.
struct counted_task {
  std::atomic<int>* runs;
  std::unique_ptr<int> owned = std::make_unique<int>(1);
  std::array<char, 128> payload{};
  void operator()() { runs->fetch_add(1); }
};

/// A pool still works: a task posted now runs (within fault_patience).
template <class Pool>
void check_still_works(Pool& pool) {
  pools::wait_group ran(1);
  pool.post([&ran] { ran.done(); });
  CHECK(ran.wait_for(fault_patience));
}

/// for_each_allocation_failure(attempt) under a watchdog named `what` (a hang aborts the test).
template <class Attempt>
void check_allocation_failures(const char* what, Attempt&& attempt,
                               std::uint64_t (*injected)() noexcept = injected_allocation_failures) {
  watchdog dog(fault_loop_limit, what);
  MESSAGE(std::string(what));
  for_each_allocation_failure(
      [&](std::uint64_t k) {
        INFO(std::string(what) << ", k = " << k);
        attempt(k);
      },
      2000, injected);
}

/// The same with the k-th mmap failing: the attempt arms fail_mmap(k) around its operation.
template <class Attempt>
void check_mmap_failures(const char* what, Attempt&& attempt) {
  check_allocation_failures(what, std::forward<Attempt>(attempt), injected_mmap_failures);
}

/// post() of `tasks` counted tasks with the k-th allocation failing, for every k. The first
/// `unarmed` posts of each attempt run with the failure not yet armed: they bring a queue up to a
/// point worth failing at (the end of a segment).
/// With any_thread, a worker's allocation may fail after post() returned (a fiber's stack): the
/// task is then reported to pools::report_unhandled_exception as out of memory, counted here.
template <class Pool>
void check_post_allocation_failures(std::size_t threads, alloc_scope scope, int tasks = 3, int unarmed = 0) {
  check_allocation_failures("post", [&](std::uint64_t k) {
    report_counter reports;
    std::atomic<int> runs{0};
    int accepted = unarmed, refused = 0;
    {
      Pool pool(threads);
      for (int i = 0; i < unarmed; ++i) pool.post(counted_task{&runs});
      std::vector<counted_task> ts;  // made before arming: only post's own allocations can fail
      ts.reserve(static_cast<std::size_t>(tasks));
      for (int i = 0; i < tasks; ++i) ts.push_back(counted_task{&runs});
      {
        fail_allocation armed(k, scope);
        for (auto& t : ts) {
          try {
            pool.post(std::move(t));
            ++accepted;
          } catch (const std::bad_alloc&) {
            ++refused;
          }
        }
      }
      check_still_works(pool);
    }  // the destructor drains and returns (or the watchdog fires)
    // Each accepted task ran once, or was reported (a worker out of memory); no refused one ran.
    CHECK(reports.other() == 0);
    CHECK(runs.load() + reports.out_of_memory() == accepted);
    if (scope == alloc_scope::this_thread) CHECK(reports.out_of_memory() == 0);
    CHECK(accepted + refused == unarmed + tasks);
    if (scope == alloc_scope::this_thread) CHECK(refused <= 1);  // one-shot: one failure at most
  });
}

/// Constructs Pool(threads, args...) with its n-th thread start failing, for n = 1, 2, ... until
/// it constructs: each failing constructor throws std::system_error, after joining every thread it
/// started. The pool that constructs works.
template <class Pool, class... Args>
void check_thread_start_failures(std::size_t threads, Args&... args) {
  watchdog dog(fault_loop_limit, "constructor under thread start failure");
  for (std::uint64_t n = 1;; ++n) {
    REQUIRE(n <= 4 * threads + 8);  // a pool starts its threads and a few more at most
    const std::uint64_t started = threads_started(), joined = threads_joined();
    std::optional<Pool> pool;
    bool refused = false, fired = false;
    {
      fail_thread_start armed(n);
      try {
        pool.emplace(threads, args...);
      } catch (const std::system_error& e) {
        refused = true;
        CHECK(e.code() == std::errc::resource_unavailable_try_again);
      }
      fired = armed.fired();
    }
    INFO("n = " << n);
    CHECK(refused == fired);  // a failed start is reported, and only then
    if (!fired) {
      REQUIRE(pool.has_value());
      check_still_works(*pool);
      pool.reset();
      CHECK(threads_started() - started == threads_joined() - joined);
      MESSAGE("constructed at n = " << n);
      return;
    }
    // Every thread the failed constructor started was joined before it threw.
    CHECK(threads_started() - started == threads_joined() - joined);
  }
}

}  // namespace pools::testing
