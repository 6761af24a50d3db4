// SPDX-License-Identifier: MIT
// Fiber stacks that cannot be had: the tuned pool's k-th stack mapping fails (pools/testing/
// fail_mmap.hpp: the interposed mmap, which only the stack pool calls), for k = 1, 2, ... until
// the operation maps what it needs. A stack is mapped on a worker, when a task first needs a fiber
// of its own, so no caller is there to catch: the task that could not start ends with the error
// instead, and its join() rethrows it (a posted task's goes to pools::report_unhandled_exception).
// For each k: every other task runs once, the failed one never; the pool still works; the
// destructor returns (watchdog); nothing leaks (LeakSanitizer in the asan preset).
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>
#include <pools/testing/report_counter.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace pfb = pools::fibers;
namespace pt = pools::testing;

namespace {

constexpr std::size_t threads = 2;

// Spawned tasks, joined: each returns its value once or carries the stack failure.
void spawn_join(std::uint64_t k) {
  constexpr int tasks = 4;
  std::atomic<int> runs{0};
  int values = 0, failed = 0;
  bool fired = false;
  {
    pfb::thread_pool pool(threads);
    std::vector<pfb::join_handle<int>> handles;
    {
      pt::fail_mmap armed(k);
      for (int i = 0; i < tasks; ++i) {
        handles.push_back(pool.spawn([t = pt::counted_task{&runs}]() mutable {
          t();
          return 42;
        }));
      }
      for (auto& h : handles) {
        try {
          const int v = h.join();
          CHECK(v == 42);
          ++values;
        } catch (...) {
          CHECK(pt::is_out_of_memory(std::current_exception()));
          ++failed;
        }
      }
      fired = armed.fired();
    }
    pt::check_still_works(pool);
  }
  CHECK(values + failed == tasks);
  CHECK(runs.load() == values);      // every value was run once; a failed task never ran
  CHECK(failed == (fired ? 1 : 0));  // one-shot: the next task maps its stack
}

// Posted tasks: a failed one is reported, never run, never lost.
void post(std::uint64_t k) {
  constexpr int tasks = 4;
  pt::report_counter reports;
  std::atomic<int> runs{0};
  const auto settled = [&] { return runs.load() + reports.out_of_memory() == tasks; };
  {
    pfb::thread_pool pool(threads);
    {
      pt::fail_mmap armed(k);  // armed until every task ran or was reported: the workers map
      for (int i = 0; i < tasks; ++i) pool.post(pt::counted_task{&runs});
      const auto deadline = std::chrono::steady_clock::now() + pt::fault_patience;
      while (!settled() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      CHECK(reports.out_of_memory() == (armed.fired() ? 1 : 0));  // one-shot
    }
    pt::check_still_works(pool);
  }
  CHECK(reports.other() == 0);
  CHECK(settled());  // each task ran once, or was reported and never ran
}

// Receivers blocked on a channel: each needs a stack of its own while it waits, so more of them
// than a slab holds (16) make the workers map more slabs, from the loop that suspends a fiber.
void channel_receivers(std::uint64_t k) {
  constexpr int receivers = 24;
  int received = 0, failed = 0, left = 0;
  std::vector<int> seen(receivers, 0);
  {
    pfb::thread_pool pool(threads);
    pfb::channel<int> ch(receivers);  // buffered: the sends below never wait
    std::vector<pfb::join_handle<int>> handles;
    {
      pt::fail_mmap armed(k);
      const std::uint64_t failures_before = pt::injected_mmap_failures();
      for (int i = 0; i < receivers; ++i)
        handles.push_back(pool.spawn([&ch] { return ch.recv().value_or(-1); }));
      // Send only once every receiver waits on a stack of its own (or has failed to get one).
      const auto deadline = std::chrono::steady_clock::now() + pt::fault_patience;
      while (pool.stats().stacks.in_use + (pt::injected_mmap_failures() - failures_before) <
                 static_cast<std::size_t>(receivers) &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::yield();
      }
      for (int i = 0; i < receivers; ++i) CHECK(ch.send(i) == pfb::channel_op_status::success);
      for (auto& h : handles) {
        try {
          const int v = h.join();
          REQUIRE(v >= 0);
          ++seen[static_cast<std::size_t>(v)];
          ++received;
        } catch (...) {
          CHECK(pt::is_out_of_memory(std::current_exception()));
          ++failed;
        }
      }
    }
    ch.close();
    while (auto v = ch.recv()) {  // a failed receiver's value stays in the buffer
      ++seen[static_cast<std::size_t>(*v)];
      ++left;
    }
    pt::check_still_works(pool);
  }
  CHECK(received + failed == receivers);
  CHECK(left == failed);
  for (int n : seen) CHECK(n == 1);  // every value received or left once
}

}  // namespace

TEST_CASE("fibers thread_pool: the k-th stack mapping fails") {
  pt::check_mmap_failures("spawn and join", spawn_join);
  pt::check_mmap_failures("post", post);
  pt::check_mmap_failures("channel receivers", channel_receivers);
}

// The textbook pool allocates a fiber's context, stack and all (256 KiB), on the worker that
// first runs it: with every thread's k-th allocation failing, that one too. In these cases it is
// the workers' only allocation (a fiber joined from a plain thread wakes no joiner on a worker).
TEST_CASE("fibers textbook_pool: a fiber whose stack cannot be allocated") {
  using pool_type = pfb::textbook_pool;
  pt::check_allocation_failures("spawn and join (every thread's allocations)", [](std::uint64_t k) {
    std::atomic<int> runs{0};
    int values = 0, failed = 0;
    {
      pool_type pool(threads);
      {
        pt::fail_allocation armed(k, pt::alloc_scope::any_thread);
        try {
          auto h = pool.spawn([t = pt::counted_task{&runs}]() mutable {
            t();
            return 42;
          });
          const int v = h.join();
          CHECK(v == 42);
          ++values;
        } catch (const std::bad_alloc&) {  // from spawn (the caller's), or from join (the worker's)
          ++failed;
        }
      }
      pt::check_still_works(pool);
    }
    CHECK(values + failed == 1);
    CHECK(runs.load() == values);
  });
  pt::check_allocation_failures("post (every thread's allocations)", [](std::uint64_t k) {
    constexpr int tasks = 4;
    pt::report_counter reports;
    std::atomic<int> runs{0};
    int accepted = 0;
    const auto settled = [&] { return runs.load() + reports.out_of_memory() == accepted; };
    {
      pool_type pool(threads);
      {
        pt::fail_allocation armed(k, pt::alloc_scope::any_thread);
        for (int i = 0; i < tasks; ++i) {
          try {
            pool.post(pt::counted_task{&runs});
            ++accepted;
          } catch (const std::bad_alloc&) {
          }
        }
        const auto deadline = std::chrono::steady_clock::now() + pt::fault_patience;
        while (!settled() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
      }
      pt::check_still_works(pool);
    }
    CHECK(reports.other() == 0);
    CHECK(settled());  // each accepted task ran once, or was reported and never ran
  });
}
