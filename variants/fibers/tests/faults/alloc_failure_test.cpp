// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post and spawn/join of both
// fiber pools with their k-th allocation failing, for k = 1, 2, ... until they complete. The
// caller gets std::bad_alloc (from the call; a joined fiber carries its value), nothing runs
// twice, an accepted fiber runs, the pool still works, the destructor returns (watchdog), and
// nothing leaks (LeakSanitizer in the asan preset). Both pools with the caller's allocations
// failing (this_thread); the tuned pool also with every thread's (any_thread), around wakes from
// outside, sleeps and timed waits, where its workers allocate. A stack that cannot be had (the
// tuned pool's mapping, the textbook pool's allocation on a worker): stack_failure_test.cpp.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/future.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

#include <atomic>
#include <new>
#include <optional>
#include <thread>
#include <vector>

namespace pfb = pools::fibers;
namespace pt = pools::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t threads = 2;
constexpr auto scope = pt::alloc_scope::this_thread;

template <class Pool>
void check_spawn_join(pt::alloc_scope scope) {
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
  check_spawn_join<Pool>(scope);
}

// Fibers woken from outside the pool: each channel send from this thread hands a value to a
// receiver blocked on a stack of its own and makes it runnable (scheduler::schedule, through the
// injection queue), with every thread's k-th allocation failing.
void check_outside_wakes(std::uint64_t k) {
  constexpr int receivers = 40;
  int received = 0, failed = 0;
  {
    pfb::thread_pool pool(threads);
    pfb::channel<int> ch;  // unbuffered: each send wakes a waiting receiver
    std::vector<pfb::join_handle<int>> handles;
    for (int i = 0; i < receivers; ++i)
      handles.push_back(pool.spawn([&ch] { return ch.recv().value_or(-1); }));
    while (pool.stats().stacks.in_use < static_cast<std::size_t>(receivers)) std::this_thread::yield();
    {
      pt::fail_allocation armed(k, pt::alloc_scope::any_thread);
      for (int i = 0; i < receivers; ++i) (void)ch.send(i);
      for (auto& h : handles) {
        try {
          if (h.join() >= 0) ++received;
        } catch (const std::bad_alloc&) {
          ++failed;
        }
      }
    }
    pt::check_still_works(pool);
  }
  CHECK(received + failed == receivers);
}

// Fibers that sleep: each files a timer (scheduler's timer_queue), woken by a worker when due.
void check_sleepers(std::uint64_t k) {
  constexpr int sleepers = 8;
  std::atomic<int> runs{0};
  int values = 0, failed = 0;
  {
    pfb::thread_pool pool(threads);
    std::vector<pfb::join_handle<int>> handles;
    {
      pt::fail_allocation armed(k, pt::alloc_scope::any_thread);
      for (int i = 0; i < sleepers; ++i) {
        try {
          handles.push_back(pool.spawn([&runs] {
            pfb::this_fiber::sleep_for(1ms);
            runs.fetch_add(1);
            return 7;
          }));
        } catch (const std::bad_alloc&) {  // spawn refused, or push_back could not grow
          ++failed;
        }
      }
      for (auto& h : handles) {
        try {
          if (h.join() == 7) ++values;
        } catch (const std::bad_alloc&) {  // the sleep could not file its timer
          ++failed;
        }
      }
    }
    pt::check_still_works(pool);
  }
  CHECK(values + failed >= sleepers);  // a spawned fiber whose handle was lost still ran
  CHECK(runs.load() >= values);
}

// Timed waits: condition_variable::wait_for and future::wait_for, each timing out or woken. On a
// fiber, each makes its timer's entry (waiter(deadline)) before it queues itself on the primitive,
// and the wait throws std::bad_alloc when it cannot; a wait that does start ends, woken or timed out.
void check_timed_waits(std::uint64_t k) {
  int outcomes = 0, failed = 0, spawned = 0;
  {
    pfb::thread_pool pool(threads);
    pfb::mutex m;
    pfb::condition_variable never_notified, notified;
    bool go = false;                   // guarded by m
    pfb::promise<int> never_set, set;  // their futures: one times out, one is woken
    pfb::future<int> times_out = never_set.get_future(), woken = set.get_future();
    std::vector<pfb::join_handle<bool>> handles;
    handles.reserve(4);
    {
      pt::fail_allocation armed(k, pt::alloc_scope::any_thread);
      const auto spawn = [&](auto fn) {
        ++spawned;
        try {
          handles.push_back(pool.spawn(std::move(fn)));
        } catch (const std::bad_alloc&) {
          ++failed;
        }
      };
      spawn([&] {
        std::unique_lock lock(m);
        return never_notified.wait_for(lock, 1ms) == std::cv_status::timeout;
      });
      spawn([&] {
        std::unique_lock lock(m);
        return notified.wait_for(lock, 10s, [&] { return go; });  // false: a lost notify
      });
      spawn([&] { return times_out.wait_for(1ms) == std::future_status::timeout; });
      spawn([&] { return woken.wait_for(10s) == std::future_status::ready; });
      std::this_thread::sleep_for(2ms);  // most waits have started: the notifies below wake them
      {
        std::unique_lock lock(m);
        go = true;
      }
      notified.notify_all();
      set.set_value(1);
      for (auto& h : handles) {
        try {
          const bool as_expected = h.join();  // timed out, or woken, as the wait says it was
          CHECK(as_expected);
          ++outcomes;
        } catch (const std::bad_alloc&) {  // spawn's fiber refused, or its wait's timer entry
          ++failed;
        }
      }
    }
    pt::check_still_works(pool);
  }
  CHECK(outcomes + failed == spawned);
}

TEST_CASE("fibers thread_pool: every thread's allocations failing") {
  pt::check_allocation_failures("sleepers", check_sleepers);
  pt::check_allocation_failures("timed waits", check_timed_waits);
  pt::check_allocation_failures("outside wakes", check_outside_wakes);
  pt::check_post_allocation_failures<pfb::thread_pool>(threads, pt::alloc_scope::any_thread);
  pt::check_post_allocation_failures<pfb::thread_pool>(threads, pt::alloc_scope::any_thread, 8, 60);
  check_spawn_join<pfb::thread_pool>(pt::alloc_scope::any_thread);
}
