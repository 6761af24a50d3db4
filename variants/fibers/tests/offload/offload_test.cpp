// SPDX-License-Identifier: MIT
// offload(blocking_pool, fn) from fibers, with a pools::futures::thread_pool as the blocking pool:
// the value and the exception come back on the caller's pool; the caller's worker runs other
// fibers meanwhile; a stop before, while queued and while running; a blocking pool that drops the
// call unrun (purged, destroyed while paused) and one that is draining. Every call is counted.
#include <doctest/doctest.h>

#include <pools/fibers/latch.hpp>
#include <pools/fibers/offload.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/futures/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "../test_support.hpp"

namespace pf = pools::fibers;
using namespace std::chrono_literals;

namespace {

using fibers_test::eventually;
using fibers_test::sanitized;

// pthread_self() is declared const: read it out of line, or a migrating fiber may see a stale one.
[[gnu::noinline]] std::thread::id thread_id_now() {
  asm volatile("" ::: "memory");
  return std::this_thread::get_id();
}

pools::fibers::pool_options one_worker() {
  pools::fibers::pool_options o;
  o.threads = 1;
  return o;
}

// An offloaded call, counted: returns whether it ran (1), was cancelled (-1) or dropped (-2).
int counted(pools::futures::thread_pool& blocking, std::atomic<int>& runs) {
  try {
    pf::offload(blocking, [&runs] { runs.fetch_add(1); });
    return 1;
  } catch (const pf::operation_cancelled&) {
    return -1;
  } catch (const pf::offload_dropped&) {
    return -2;
  }
}

}  // namespace

TEST_CASE("offload: the value comes back on the caller's pool; the call ran on the blocking pool") {
  pf::thread_pool pool(2);
  pools::futures::thread_pool blocking(2);
  const auto r = pool.run([&] {
    std::thread::id ran_on;
    const int v = pf::offload(blocking, [&ran_on] {
      ran_on = std::this_thread::get_id();
      std::this_thread::sleep_for(1ms);  // a blocking call
      return 21 * 2;
    });
    return std::make_pair(v, pf::this_fiber::is_fiber() && ran_on != thread_id_now());
  });
  CHECK(r.first == 42);
  CHECK(r.second);

  // Many at once, every one counted: 200 fibers, 4 blocking threads.
  pools::futures::thread_pool four(4);
  std::atomic<long> sum{0};
  std::vector<pf::join_handle<void>> calls;
  for (int i = 0; i < 200; ++i) {
    calls.push_back(pool.spawn([&, i] {
      sum.fetch_add(pf::offload(four, [i] {
        std::this_thread::sleep_for(100us);
        return 2 * i;
      }));
    }));
  }
  for (auto& c : calls) c.join();
  CHECK(sum.load() == 2 * (199 * 200 / 2));
}

TEST_CASE("offload: the fiber waits, not its worker: the only worker runs other fibers meanwhile") {
  pf::thread_pool pool(one_worker());
  pools::futures::thread_pool blocking(1);
  std::atomic<bool> call_running{false}, release{false};
  auto call = pool.spawn([&] {
    return pf::offload(blocking, [&] {
      call_running = true;
      while (!release.load()) std::this_thread::sleep_for(100us);
      return 5;
    });
  });
  REQUIRE(eventually([&] { return call_running.load(); }));
  CHECK(pool.run([] { return 7; }) == 7);  // would hang if the worker were blocked in the call
  release = true;
  CHECK(call.join() == 5);
}

TEST_CASE("offload: an exception thrown by the call is rethrown to the fiber") {
  pf::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  CHECK_THROWS_WITH_AS(pool.run([&] {
    return pf::offload(blocking, []() -> std::string { throw std::runtime_error("legacy call failed"); });
  }),
                       "legacy call failed", std::runtime_error);
  CHECK(pool.run([&] { return pf::offload(blocking, [] { return 1; }); }) == 1);  // fine afterwards
}

TEST_CASE("offload: stopped before the call, fn is not posted") {
  pf::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::atomic<int> runs{0};
  std::stop_source source;
  source.request_stop();
  CHECK(pool.spawn(source.get_token(), [&] { return counted(blocking, runs); }).join() == -1);
  blocking.wait();
  CHECK(runs.load() == 0);
  CHECK(blocking.get_tasks_total() == 0);
}

TEST_CASE("offload: stopped while queued, fn is not run; the fiber ends when the pool gets to it") {
  pf::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::atomic<int> runs{0};
  std::stop_source source;
  blocking.pause();
  auto call = pool.spawn(source.get_token(), [&] { return counted(blocking, runs); });
  REQUIRE(eventually([&] { return blocking.get_tasks_queued() == 1; }));
  source.request_stop();
  std::this_thread::sleep_for(5ms);
  CHECK_FALSE(call.done());  // fn is still the blocking pool's: the fiber waits for it
  blocking.unpause();
  CHECK(call.join() == -1);
  CHECK(runs.load() == 0);
}

TEST_CASE("offload: stopped while running, fn finishes (it may read the token) and the fiber is cancelled") {
  pf::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::stop_source source;
  std::atomic<bool> started{false};
  std::atomic<int> saw_stop{0};
  auto call = pool.spawn(source.get_token(), [&] {
    try {
      pf::offload(blocking, [&](std::stop_token stop) {
        started = true;
        while (!stop.stop_requested()) std::this_thread::sleep_for(100us);  // a call that can be told to stop
        saw_stop.fetch_add(1);
        return 5;
      });
      return 0;
    } catch (const pf::operation_cancelled&) {
      return -1;
    }
  });
  REQUIRE(eventually([&] { return started.load(); }));
  source.request_stop();
  CHECK(call.join() == -1);
  CHECK(saw_stop.load() == 1);
}

TEST_CASE(
    "offload: a blocking pool that drops the call (purged, or destroyed while paused) ends it with "
    "offload_dropped") {
  pf::thread_pool pool(2);
  std::atomic<int> runs{0};
  std::vector<pf::join_handle<int>> calls;
  {
    pools::futures::thread_pool blocking(1);
    blocking.pause();
    for (int i = 0; i < 3; ++i) calls.push_back(pool.spawn([&] { return counted(blocking, runs); }));
    REQUIRE(eventually([&] { return blocking.get_tasks_queued() == 3; }));
    CHECK(blocking.purge() == 3);
    for (auto& c : calls) CHECK(c.join() == -2);
  }
  calls.clear();
  auto blocking = std::make_unique<pools::futures::thread_pool>(1);
  blocking->pause();
  for (int i = 0; i < 3; ++i) calls.push_back(pool.spawn([&] { return counted(*blocking, runs); }));
  REQUIRE(eventually([&] { return blocking->get_tasks_queued() == 3; }));
  blocking.reset();  // paused: the queued calls are destroyed unrun
  for (auto& c : calls) CHECK(c.join() == -2);
  CHECK(runs.load() == 0);
}

TEST_CASE("offload: a blocking pool being destroyed (draining) still runs the queued calls; nobody hangs") {
  pf::thread_pool pool(2);
  std::atomic<int> runs{0};
  const int n = sanitized() ? 20 : 100;
  std::vector<pf::join_handle<int>> calls;
  {
    pools::futures::thread_pool blocking(1);
    blocking.pause();  // so that every call is queued before the destructor starts
    for (int i = 0; i < n; ++i) calls.push_back(pool.spawn([&] { return counted(blocking, runs); }));
    REQUIRE(eventually([&] { return blocking.get_tasks_queued() == static_cast<std::size_t>(n); }));
    blocking.unpause();
  }  // ~thread_pool drains: every queued call runs and wakes its fiber
  int ran = 0;
  for (auto& c : calls) ran += c.join() == 1 ? 1 : 0;
  CHECK(ran == n);
  CHECK(runs.load() == n);
}
