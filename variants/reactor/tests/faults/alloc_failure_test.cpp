// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post of every reactor pool,
// and the textbook pool's timers and fd watches, with their k-th allocation failing, for
// k = 1, 2, ... until they complete. The caller gets std::bad_alloc, nothing runs twice, an
// accepted callback runs, the pool still works, the destructor returns (watchdog), and nothing
// leaks (LeakSanitizer in the asan preset). post fails the caller's allocations only
// (this_thread); the timer and the watch also fail their loop's (any_thread): a timer filed, or
// a callback installed, by a task on the loop. There the failure goes to
// pools::report_unhandled_exception, counted here; a watch whose callback could not be
// installed is undone (the fd can be watched again, and no event of it is left to spin on).
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/fault_loop.hpp>
#include <pools/testing/report_counter.hpp>
#include <pools/wait_group.hpp>

#include <unistd.h>

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

// Waits (bounded) until done() holds.
template <class Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + pt::fault_patience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

// A pipe whose read end is watched: the callback takes the byte (so the fd is no longer ready)
// and counts the call.
struct pipe_pair {
  int fd[2] = {-1, -1};
  pipe_pair() { REQUIRE(::pipe(fd) == 0); }
  ~pipe_pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  pipe_pair(const pipe_pair&) = delete;
  pipe_pair& operator=(const pipe_pair&) = delete;
  void send() const { REQUIRE(::write(fd[1], "x", 1) == 1); }
};

auto taker(int fd, std::atomic<int>& calls) {
  return [fd, &calls, owned = std::make_unique<int>(1)](std::uint32_t) {
    char c = 0;
    if (::read(fd, &c, 1) == 1) calls.fetch_add(1);
  };
}

// watch() with the k-th allocation failing (the caller's, or with any_thread also the loop's).
// Then, with the byte sent while still armed: the callback was called once, or the watch was
// refused (std::bad_alloc to the caller, or reported by the loop) and the fd can be watched
// again, and is then called once.
void check_watch(std::uint64_t k, pt::alloc_scope watch_scope) {
  pt::report_counter reports;
  std::atomic<int> calls{0};
  pipe_pair p;
  bool refused = false;
  {
    pr::textbook_pool pool(threads);
    {
      pt::fail_allocation armed(k, watch_scope);
      try {
        pool.watch(p.fd[0], POLLIN, taker(p.fd[0], calls));
      } catch (const std::bad_alloc&) {
        refused = true;
      }
      p.send();
      // Armed until the loop has either called the callback or reported it could not install it.
      if (!refused) CHECK(eventually([&] { return calls.load() == 1 || reports.out_of_memory() == 1; }));
    }
    CHECK(reports.other() == 0);
    if (refused || reports.out_of_memory() == 1) {
      CHECK(calls.load() == 0);                            // a watch that failed never calls
      pool.watch(p.fd[0], POLLIN, taker(p.fd[0], calls));  // not EEXIST: the failed one was undone
      CHECK(eventually([&] { return calls.load() == 1; }));
    }
    CHECK(calls.load() == 1);
    pool.unwatch(p.fd[0]);
    pt::check_still_works(pool);
  }
  CHECK(calls.load() == 1);
}

}  // namespace

TEST_CASE_TEMPLATE("reactor pools: post under allocation failure", Pool, pr::textbook_pool,
                   pr::per_thread_executor, pr::shared_executor) {
  pt::check_post_allocation_failures<Pool>(threads, scope);
  pt::check_post_allocation_failures<Pool>(threads, scope, 8, 505);
}

TEST_CASE("reactor textbook_pool: a timer under allocation failure") {
  for (const auto timer_scope : {pt::alloc_scope::this_thread, pt::alloc_scope::any_thread}) {
    pt::check_allocation_failures("post_after", [&](std::uint64_t k) {
      pt::report_counter reports;
      std::atomic<int> runs{0};
      bool accepted = false;
      {
        pr::textbook_pool pool(threads);
        pt::counted_task t{&runs};
        {
          pt::fail_allocation armed(k, timer_scope);
          try {
            pool.post_after(1ms, std::move(t));
            accepted = true;
          } catch (const std::bad_alloc&) {
          }
          // Armed until the timer ran, or the loop reported that it could not file it.
          if (accepted) CHECK(eventually([&] { return runs.load() + reports.out_of_memory() == 1; }));
        }
        pt::check_still_works(pool);
      }
      CHECK(reports.other() == 0);
      CHECK(runs.load() + reports.out_of_memory() == (accepted ? 1 : 0));
    });
  }
}

TEST_CASE("reactor textbook_pool: watch under allocation failure") {
  pt::check_allocation_failures("watch (the caller's allocations)",
                                [](std::uint64_t k) { check_watch(k, pt::alloc_scope::this_thread); });
  pt::check_allocation_failures("watch (every thread's)",
                                [](std::uint64_t k) { check_watch(k, pt::alloc_scope::any_thread); });
}
