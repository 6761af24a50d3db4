// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post of every reactor pool,
// and the textbook pool's timers and fd watches, with their k-th allocation failing, for
// k = 1, 2, ... until they complete. The caller gets std::bad_alloc, nothing runs twice, an
// accepted callback runs, the pool still works, the destructor returns (watchdog), and nothing
// leaks (LeakSanitizer in the asan preset). Only the caller's allocations are failed
// (this_thread): see docs/reliability.md, "Pools: out of memory, out of threads".
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/fault_loop.hpp>
#include <pools/wait_group.hpp>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>

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

TEST_CASE("reactor textbook_pool: an fd watch under allocation failure") {
  pt::check_allocation_failures("watch", [&](std::uint64_t k) {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    REQUIRE(fd >= 0);
    pools::wait_group fired(1);
    std::atomic<int> calls{0};
    {
      pr::textbook_pool pool(threads);
      bool accepted = false;
      try {
        pt::fail_allocation armed(k, scope);
        pool.watch(fd, EPOLLIN, [&, fd](std::uint32_t) {
          std::uint64_t v = 0;
          if (::read(fd, &v, sizeof v) == sizeof v && calls.fetch_add(1) == 0) fired.done();
        });
        accepted = true;
      } catch (const std::bad_alloc&) {
      }
      if (accepted) {
        const std::uint64_t one = 1;
        REQUIRE(::write(fd, &one, sizeof one) == sizeof one);
        CHECK(fired.wait_for(pt::fault_patience));
        pool.unwatch(fd);
      } else {
        // A refused watch left nothing behind: the fd can be watched now.
        pool.watch(fd, EPOLLIN, [](std::uint32_t) {});
        pool.unwatch(fd);
      }
      pt::check_still_works(pool);
    }
    ::close(fd);
  });
}
