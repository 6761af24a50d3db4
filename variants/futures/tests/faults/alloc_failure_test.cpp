// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post and submit of every
// futures pool with their k-th allocation failing, for k = 1, 2, ... until they complete. The
// caller gets std::bad_alloc (from the call; a future returned carries the value), nothing runs
// twice, an accepted task runs, the pool still works, the destructor returns (watchdog), and
// nothing leaks (LeakSanitizer in the asan preset). this_thread: the caller's allocations fail;
// any_thread: the workers' too.
#include <doctest/doctest.h>

#include <pools/futures/textbook_pool.hpp>
#include <pools/futures/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

#include <atomic>
#include <future>
#include <new>
#include <optional>

namespace pf = pools::futures;
namespace pt = pools::testing;

namespace {

constexpr std::size_t threads = 2;
constexpr pt::alloc_scope scopes[] = {pt::alloc_scope::this_thread, pt::alloc_scope::any_thread};

template <class Pool, class F>
auto submit_to(Pool& pool, F&& f) {
  if constexpr (requires { pool.submit_task(std::forward<F>(f)); })
    return pool.submit_task(std::forward<F>(f));
  else
    return pool.submit(std::forward<F>(f));
}

template <class Pool>
void check_submit(pt::alloc_scope scope) {
  pt::check_allocation_failures("submit", [&](std::uint64_t k) {
    std::atomic<int> runs{0};
    std::optional<std::future<int>> result;
    {
      Pool pool(threads);
      pt::counted_task t{&runs};  // owns a heap block: a lost task leaks it
      try {
        pt::fail_allocation armed(k, scope);
        result.emplace(submit_to(pool, [t = std::move(t)]() mutable {
          t();
          return 42;
        }));
      } catch (const std::bad_alloc&) {
      }
      pt::check_still_works(pool);
    }  // drains
    if (result) {
      CHECK(result->get() == 42);
      CHECK(runs.load() == 1);
    } else {
      CHECK(runs.load() == 0);
    }
  });
}

}  // namespace

TEST_CASE_TEMPLATE("futures pools: post and submit under allocation failure", Pool, pf::textbook_pool,
                   pf::thread_pool, pf::priority_thread_pool) {
  for (const auto scope : scopes) {
    CAPTURE(static_cast<int>(scope));
    pt::check_post_allocation_failures<Pool>(threads, scope);
    // Across the end of a queue's first block or segment, where a push allocates.
    pt::check_post_allocation_failures<Pool>(threads, scope, 8, 505);
    check_submit<Pool>(scope);
  }
}
