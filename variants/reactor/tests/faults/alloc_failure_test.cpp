// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post of every reactor pool,
// and the textbook pool's timers, with their k-th allocation failing, for
// k = 1, 2, ... until they complete. The caller gets std::bad_alloc, nothing runs twice, an
// accepted callback runs, the pool still works, the destructor returns (watchdog), and nothing
// leaks (LeakSanitizer in the asan preset). Only the caller's allocations are failed
// (this_thread): see docs/reliability.md, "Pools: out of memory, out of threads". Not here: the
// textbook pool's watch(), which registers the fd with epoll before it queues the callback, so a
// failing allocation leaves the fd registered without one (the same page, "Left open").
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/fault_loop.hpp>

#include <atomic>
#include <chrono>
#include <new>
#include <thread>

namespace pr = pools::reactor;
namespace pt = pools::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t threads = 2;
constexpr auto scope = pt::alloc_scope::this_thread;

}  // namespace

TEST_CASE_TEMPLATE("reactor pools: post under allocation failure", Pool, pr::textbook_pool,
                   pr::per_thread_executor, pr::shared_executor) {
  pt::check_post_allocation_failures<Pool>(threads, scope);
  pt::check_post_allocation_failures<Pool>(threads, scope, 8, 505);
}

TEST_CASE("reactor textbook_pool: a timer under allocation failure") {
  pt::check_allocation_failures("post_after", [&](std::uint64_t k) {
    std::atomic<int> runs{0};
    bool accepted = false;
    {
      pr::textbook_pool pool(threads);
      pt::counted_task t{&runs};
      try {
        pt::fail_allocation armed(k, scope);
        pool.post_after(1ms, std::move(t));
        accepted = true;
      } catch (const std::bad_alloc&) {
      }
      // A due timer runs before the destructor returns (textbook_pool.hpp): wait for it first.
      std::this_thread::sleep_for(2ms);
      pt::check_still_works(pool);
    }
    CHECK(runs.load() == (accepted ? 1 : 0));
  });
}
