// SPDX-License-Identifier: MIT
// offload(blocking_pool, fn) with a pools::futures::thread_pool as the blocking pool: the value and
// the exception come back on the caller's pool; a stop before, while queued and while running; a
// blocking pool that drops the call unrun (paused and destroyed, purged) and one that is draining.
#include <doctest/doctest.h>

#include <pools/coroutines/offload.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
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

namespace pc = pools::coroutines;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

bool sanitized() {
  const char* v = std::getenv("POOLS_SANITIZED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

bool wait_until(const auto& done, std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = clock_type::now() + limit;
  while (!done()) {
    if (clock_type::now() > end) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

struct on_pool {
  int value;
  bool resumed_on_pool;
  bool ran_elsewhere;
};

pc::task<on_pool> lookup(pc::thread_pool& pool, pools::futures::thread_pool& blocking, int key) {
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  const int v = co_await pc::offload(blocking, [key, &ran_on] {
    ran_on = std::this_thread::get_id();
    std::this_thread::sleep_for(1ms);  // a blocking call
    return key * 2;
  });
  co_return on_pool{v, pool.on_worker_thread(), ran_on != caller};
}

pc::task<std::string> throws(pools::futures::thread_pool& blocking) {
  co_return co_await pc::offload(blocking,
                                 []() -> std::string { throw std::runtime_error("legacy call failed"); });
}

pc::task<void> counted(pools::futures::thread_pool& blocking, std::atomic<int>& runs,
                       std::atomic<int>& cancelled) {
  try {
    co_await pc::offload(blocking, [&runs] { runs.fetch_add(1); });
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

}  // namespace

TEST_CASE("offload: the value comes back, on the caller's pool; the call ran on the blocking pool") {
  pc::thread_pool pool(2);
  pools::futures::thread_pool blocking(2);
  const on_pool r = pc::sync_wait(pool, lookup(pool, blocking, 21));
  CHECK(r.value == 42);
  CHECK(r.resumed_on_pool);
  CHECK(r.ran_elsewhere);

  // Many at once, every one counted: 200 coroutines, 4 blocking threads.
  auto many = [](pc::thread_pool& p, pools::futures::thread_pool& b) -> pc::task<long> {
    std::vector<pc::task<on_pool>> calls;
    for (int i = 0; i < 200; ++i) calls.push_back(lookup(p, b, i));
    long sum = 0;
    for (const on_pool& o : co_await pc::when_all(std::move(calls)))
      sum += o.value + (o.resumed_on_pool ? 0 : 1'000'000);
    co_return sum;
  };
  CHECK(pc::sync_wait(pool, many(pool, blocking)) == 2 * (199 * 200 / 2));
}

TEST_CASE("offload: an exception thrown by the call is rethrown by the co_await") {
  pc::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, throws(blocking)), "legacy call failed", std::runtime_error);
  // The pool is fine afterwards.
  CHECK(pc::sync_wait(pool, lookup(pool, blocking, 1)).value == 2);
}

TEST_CASE("offload: stopped before the co_await, the call is not posted") {
  pc::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::atomic<int> runs{0}, cancelled{0};
  std::stop_source source;
  source.request_stop();
  pc::sync_wait(pool, pc::with_stop_token(source.get_token(), counted(blocking, runs, cancelled)));
  CHECK(cancelled.load() == 1);
  blocking.wait();
  CHECK(runs.load() == 0);
  CHECK(blocking.get_tasks_total() == 0);
}

TEST_CASE("offload: stopped while queued, the call is not run; the caller ends when the pool gets to it") {
  pc::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::atomic<int> runs{0}, cancelled{0};
  std::stop_source source;
  blocking.pause();
  pool.spawn(pc::with_stop_token(source.get_token(), counted(blocking, runs, cancelled)));
  REQUIRE(wait_until([&] { return blocking.get_tasks_queued() == 1; }));
  source.request_stop();
  std::this_thread::sleep_for(5ms);
  CHECK(cancelled.load() == 0);  // the call is still the blocking pool's: the caller waits for it
  blocking.unpause();
  REQUIRE(wait_until([&] { return cancelled.load() == 1; }));
  CHECK(runs.load() == 0);
}

TEST_CASE(
    "offload: stopped while running, the call finishes (it may read the token) and the caller is cancelled") {
  pc::thread_pool pool(2);
  pools::futures::thread_pool blocking(1);
  std::stop_source source;
  std::atomic<bool> started{false};
  std::atomic<int> saw_stop{0}, cancelled{0}, returned{0};
  auto call = [](pools::futures::thread_pool& b, std::atomic<bool>& s, std::atomic<int>& seen,
                 std::atomic<int>& c, std::atomic<int>& r) -> pc::task<void> {
    try {
      co_await pc::offload(b, [&s, &seen](std::stop_token stop) {
        s.store(true);
        while (!stop.stop_requested()) std::this_thread::sleep_for(100us);  // a call that can be told to stop
        seen.fetch_add(1);
        return 5;
      });
      r.fetch_add(1);
    } catch (const pc::operation_cancelled&) {
      c.fetch_add(1);
    }
  };
  pool.spawn(pc::with_stop_token(source.get_token(), call(blocking, started, saw_stop, cancelled, returned)));
  REQUIRE(wait_until([&] { return started.load(); }));
  source.request_stop();
  REQUIRE(wait_until([&] { return cancelled.load() == 1; }));
  CHECK(saw_stop.load() == 1);
  CHECK(returned.load() == 0);
}

TEST_CASE(
    "offload: a blocking pool that drops the call (purged, or destroyed while paused) ends it with "
    "offload_dropped") {
  pc::thread_pool pool(2);
  std::atomic<int> dropped{0}, other{0};
  auto call = [](pools::futures::thread_pool& b, std::atomic<int>& d, std::atomic<int>& o) -> pc::task<void> {
    try {
      co_await pc::offload(b, [] { return 1; });
      o.fetch_add(1);
    } catch (const pc::offload_dropped&) {
      d.fetch_add(1);
    }
  };
  {
    pools::futures::thread_pool blocking(1);
    blocking.pause();
    for (int i = 0; i < 3; ++i) pool.spawn(call(blocking, dropped, other));
    REQUIRE(wait_until([&] { return blocking.get_tasks_queued() == 3; }));
    CHECK(blocking.purge() == 3);
    REQUIRE(wait_until([&] { return dropped.load() == 3; }));
  }
  auto blocking = std::make_unique<pools::futures::thread_pool>(1);
  blocking->pause();
  for (int i = 0; i < 3; ++i) pool.spawn(call(*blocking, dropped, other));
  REQUIRE(wait_until([&] { return blocking->get_tasks_queued() == 3; }));
  blocking.reset();  // paused: the queued calls are destroyed unrun
  REQUIRE(wait_until([&] { return dropped.load() == 6; }));
  CHECK(other.load() == 0);
}

TEST_CASE("offload: a blocking pool being destroyed (draining) still runs the queued calls; nobody hangs") {
  pc::thread_pool pool(2);
  std::atomic<int> done{0};
  const int calls = sanitized() ? 20 : 100;
  {
    pools::futures::thread_pool blocking(1);
    auto call = [](pools::futures::thread_pool& b, std::atomic<int>& d) -> pc::task<void> {
      const int v = co_await pc::offload(b, [] {
        std::this_thread::sleep_for(100us);
        return 1;
      });
      d.fetch_add(v);
    };
    blocking.pause();  // so that every call is posted (queued) before the destructor starts
    for (int i = 0; i < calls; ++i) pool.spawn(call(blocking, done));
    REQUIRE(wait_until([&] { return blocking.get_tasks_queued() == static_cast<std::size_t>(calls); }));
    blocking.unpause();
  }  // ~thread_pool drains: every queued call runs and resumes its caller
  REQUIRE(wait_until([&] { return done.load() == calls; }));
}
