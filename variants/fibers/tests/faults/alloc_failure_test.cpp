// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post and spawn/join of both
// fiber pools with their k-th allocation failing, for k = 1, 2, ... until they complete. The
// caller gets std::bad_alloc (from the call; a joined fiber carries its value), nothing runs
// twice, an accepted fiber runs, the pool still works, the destructor returns (watchdog), and
// nothing leaks (LeakSanitizer in the asan preset). Only the caller's allocations are failed
// (this_thread): a worker that cannot get memory for a fiber has no caller to report to and ends
// the process (scheduler::new_fiber, README "Faults").
#include <doctest/doctest.h>

#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

#include <atomic>
#include <new>
#include <optional>

namespace pfb = pools::fibers;
namespace pt = pools::testing;

namespace {

constexpr std::size_t threads = 2;
constexpr auto scope = pt::alloc_scope::this_thread;

template <class Pool>
void check_spawn_join() {
  pt::check_allocation_failures("spawn and join", [&](std::uint64_t k) {
    std::atomic<int> runs{0};
    std::optional<int> value;
    {
      Pool pool(threads);
      pt::counted_task t{&runs};
      try {
        pt::fail_allocation armed(k, scope);
        auto h = pool.spawn([t = std::move(t)]() mutable {
          t();
          return 42;
        });
        value = h.join();
      } catch (const std::bad_alloc&) {
      }
      pt::check_still_works(pool);
    }
    if (value) {
      CHECK(*value == 42);
      CHECK(runs.load() == 1);
    } else {
      CHECK(runs.load() <= 1);
    }
  });
}

}  // namespace

TEST_CASE_TEMPLATE("fibers pools: post, spawn and join under allocation failure", Pool, pfb::textbook_pool,
                   pfb::thread_pool) {
  pt::check_post_allocation_failures<Pool>(threads, scope);
  // Across the end of a block of the run queue (a std::deque: 32 or 64 items), where a push allocates.
  pt::check_post_allocation_failures<Pool>(threads, scope, 8, 60);
  check_spawn_join<Pool>();
}
