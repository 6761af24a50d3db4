// SPDX-License-Identifier: MIT
// thread_pool with a park hook (pools/park_hook.hpp): idle workers wait in the hook, run its
// foreign work on their own thread, and the pool's own behaviour does not change.
#include <doctest/doctest.h>

#include <pools/fibers/future.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/queue_park_hook.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using pools::fibers::pool_options;
using pools::fibers::thread_pool;
using pools::testing::queue_park_hook;

TEST_CASE("park hook: every task runs; idle workers park in the hook and are woken through it") {
  queue_park_hook hook(2);
  std::atomic<int> ran{0};
  {
    thread_pool pool(pool_options{.threads = 2, .park_hook = &hook});
    pools::testing::post_in_rounds_until_parked(pool, hook, ran);
  }
  CHECK(ran.load() == 10'500);
  CHECK(hook.parks.load() > 0);
  CHECK(hook.wakes.load() > 0);
  CHECK(hook.one_thread_per_index(std::this_thread::get_id()));  // index i is worker i's thread
}

// The server's read: the fiber starts an operation whose completion arrives as foreign work on
// its worker and fulfils a promise it then waits on. Many times over, so that the hook's
// between-task polls fall on every position — including while the fiber is still suspending,
// where running its own completion would deadlock (the completion waits for the suspension).
TEST_CASE("park hook: foreign work fulfils the promise a fiber waits on, 2,000 times") {
  queue_park_hook hook(1);
  thread_pool pool(pool_options{.threads = 1, .park_hook = &hook});
  const int done = pool.run([&] {
    int n = 0;
    for (int i = 0; i < 2000; ++i) {
      pools::fibers::promise<void> p;
      auto f = p.get_future();
      hook.post(0, [&p] { pools::fibers::promise<void>(std::move(p)).set_value(); });
      f.get();
      ++n;
    }
    return n;
  });
  CHECK(done == 2000);
  CHECK(hook.ran.load() == 2000);
}

// The server's 64 connections on one worker: one poll of the event loop wakes many fibers. They
// must run oldest first. On the LIFO deque the newest ran first, and every between-task poll put
// newer ones on top of the oldest again (a /plaintext p99 of 3 ms: pools/ready_fifo.hpp).
TEST_CASE("park hook: fibers woken by the hook's completions run in completion order") {
  queue_park_hook hook(1);
  thread_pool pool(pool_options{.threads = 1, .park_hook = &hook});
  std::vector<int> started, resumed;  // one worker: no other thread touches them
  started.reserve(200);
  resumed.reserve(200);
  pool.run([&] {
    std::vector<pools::fibers::join_handle<void>> reads;
    for (int id = 0; id < 200; ++id) {
      reads.push_back(pool.spawn([&, id] {
        pools::fibers::promise<void> p;
        auto f = p.get_future();
        started.push_back(id);
        hook.post(0, [&p] { pools::fibers::promise<void>(std::move(p)).set_value(); });
        f.get();
        resumed.push_back(id);
      }));
    }
    for (auto& r : reads) r.join();
  });
  REQUIRE(started.size() == 200);
  CHECK(resumed == started);  // the hook runs completions in the order they were posted
}

// New work posted from a completion must reach another worker: here worker 0 stays inside the
// completion, so only worker 1 can run the task.
TEST_CASE("park hook: a task posted from the hook's completion runs on another worker") {
  queue_park_hook hook(2);
  thread_pool pool(pool_options{.threads = 2, .park_hook = &hook});
  std::this_thread::sleep_for(20ms);  // both workers parked in the hook
  CHECK(pools::testing::posted_from_completion_ran_elsewhere(pool, hook));
}

TEST_CASE("park hook: foreign work posted from outside wakes a parked worker") {
  queue_park_hook hook(2);
  thread_pool pool(pool_options{.threads = 2, .park_hook = &hook});
  std::this_thread::sleep_for(20ms);  // both workers parked in the hook
  pools::wait_group wg(2);
  std::atomic<int> off_main{0};
  const auto main_id = std::this_thread::get_id();
  for (unsigned i = 0; i < 2; ++i) {
    hook.post(i, [&] {
      if (std::this_thread::get_id() != main_id) off_main.fetch_add(1);
      wg.done();
    });
  }
  CHECK(wg.wait_for(5s));
  CHECK(off_main.load() == 2);
  CHECK(hook.one_thread_per_index(main_id));
}

TEST_CASE("park hook: a sleeping fiber wakes at its deadline (the hook parks with a timeout)") {
  queue_park_hook hook(1);
  thread_pool pool(pool_options{.threads = 1, .park_hook = &hook});
  const auto start = std::chrono::steady_clock::now();
  pool.run([] { pools::fibers::this_fiber::sleep_for(30ms); });
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 30ms);
  CHECK(took < 2s);
}
