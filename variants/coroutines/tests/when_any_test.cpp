// SPDX-License-Identifier: MIT
// when_any and with_timeout: the first result wins, the others are stopped and awaited before the
// co_await returns, an exception is delivered, a timeout is a stop request on a timer.
#include <doctest/doctest.h>

#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_any.hpp>
#include <pools/coroutines/with_timeout.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// Counts every task that has ended (any way): read right after when_any returns, it shows that
// no task outlived the co_await.
struct end_counter {
  std::atomic<int>& ended;
  ~end_counter() { ended.fetch_add(1); }
};

pc::task<int> after(pc::thread_pool& pool, std::chrono::milliseconds d, int v, std::atomic<int>& ended,
                    std::atomic<int>& cancelled) {
  end_counter counted{ended};
  try {
    co_await pc::sleep_for(pool, d);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
    throw;
  }
  co_return v;
}

pc::task<int> fail_after(pc::thread_pool& pool, std::chrono::milliseconds d, std::atomic<int>& ended) {
  end_counter counted{ended};
  co_await pc::sleep_for(pool, d);
  throw std::runtime_error("failed first");
}

// A loser that never looks at its token: when_any must still wait for it.
pc::task<int> stubborn(std::chrono::milliseconds d, std::atomic<int>& ended) {
  end_counter counted{ended};
  std::this_thread::sleep_for(d);
  co_return -1;
}

struct outcome {
  std::size_t index;
  int value;
  int ended_at_return;
};

pc::task<outcome> race_three(pc::thread_pool& pool, std::atomic<int>& ended, std::atomic<int>& cancelled) {
  auto r = co_await pc::when_any(after(pool, 60s, 1, ended, cancelled), after(pool, 5ms, 2, ended, cancelled),
                                 after(pool, 60s, 3, ended, cancelled));
  co_return outcome{r.index, r.value, ended.load()};
}

}  // namespace

TEST_CASE("when_any: the first to finish wins; the others are stopped and have ended when it returns") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  const auto start = clock_type::now();
  const outcome o = pc::sync_wait(pool, race_three(pool, ended, cancelled));
  CHECK(clock_type::now() - start < 10s);  // not the losers' 60 s
  CHECK(o.index == 1);
  CHECK(o.value == 2);
  CHECK(o.ended_at_return == 3);  // every task, winner and losers, ended before when_any returned
  CHECK(cancelled.load() == 2);
}

TEST_CASE("when_any: an exception that finishes first is delivered; a vector of tasks works too") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  auto body = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    auto r = co_await pc::when_any(after(p, 60s, 1, e, c), fail_after(p, 2ms, e));
    co_return r.value;
  };
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, body(pool, ended, cancelled)), "failed first", std::runtime_error);
  CHECK(ended.load() == 2);
  CHECK(cancelled.load() == 1);

  auto vec = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<std::size_t> {
    std::vector<pc::task<int>> tasks;
    for (int i = 0; i < 6; ++i) tasks.push_back(after(p, i == 4 ? 1ms : 60s, i, e, c));
    auto r = co_await pc::when_any(std::move(tasks));
    CHECK(r.value == 4);
    co_return r.index;
  };
  CHECK(pc::sync_wait(pool, vec(pool, ended, cancelled)) == 4);
  CHECK(cancelled.load() == 6);

  auto none = []() -> pc::task<int> {
    auto r = co_await pc::when_any(std::vector<pc::task<int>>{});
    co_return r.value;
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, none()), std::invalid_argument);
}

TEST_CASE("when_any: a loser that ignores its token is still awaited") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  auto body = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    auto r = co_await pc::when_any(stubborn(30ms, e), after(p, 1ms, 7, e, c));
    co_return r.value * 100 + e.load();
  };
  CHECK(pc::sync_wait(pool, body(pool, ended, cancelled)) == 702);
}

TEST_CASE("when_any: many races, each finishing once (counted)") {
  pc::thread_pool pool(2);
  const int rounds = coro_test::sanitized() ? 50 : 300;
  std::atomic<int> ended{0}, cancelled{0};
  auto body = [](pc::thread_pool& p, int round, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    std::vector<pc::task<int>> tasks;
    for (int i = 0; i < 4; ++i)
      tasks.push_back(after(p, std::chrono::milliseconds((round + i) % 3), i, e, c));
    auto r = co_await pc::when_any(std::move(tasks));
    CHECK(static_cast<int>(r.index) == r.value);
    co_return e.load();
  };
  for (int r = 0; r < rounds; ++r) CHECK(pc::sync_wait(pool, body(pool, r, ended, cancelled)) == 4 * (r + 1));
  CHECK(ended.load() == 4 * rounds);
}

TEST_CASE(
    "with_timeout: the deadline stops the task and throws timed_out; a task in time returns its value") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  auto slow = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    co_return co_await pc::with_timeout(p, 20ms, after(p, 60s, 1, e, c));
  };
  auto start = clock_type::now();
  CHECK_THROWS_AS(pc::sync_wait(pool, slow(pool, ended, cancelled)), pc::timed_out);
  const auto took = clock_type::now() - start;
  CHECK(took >= 20ms);
  CHECK(took < 10s);
  CHECK(ended.load() == 1);
  CHECK(cancelled.load() == 1);

  auto fast = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    co_return co_await pc::with_timeout(p, 60s, after(p, 1ms, 5, e, c));
  };
  start = clock_type::now();
  CHECK(pc::sync_wait(pool, fast(pool, ended, cancelled)) == 5);
  CHECK(clock_type::now() - start < 10s);  // the 60 s timer was cancelled, not waited for

  auto throws = [](pc::thread_pool& p, std::atomic<int>& e) -> pc::task<int> {
    co_return co_await pc::with_timeout(p, 60s, fail_after(p, 1ms, e));
  };
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, throws(pool, ended)), "failed first", std::runtime_error);

  auto void_task = [](pc::thread_pool& p) -> pc::task<void> {
    co_await pc::with_timeout(
        p, 10ms, [](pc::thread_pool& q) -> pc::task<void> { co_await pc::sleep_for(q, 60s); }(p));
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, void_task(pool)), pc::operation_cancelled);  // timed_out is one
}

TEST_CASE("with_timeout: a stop from above is a cancellation, not a time-out") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  std::stop_source source;
  auto body = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    co_return co_await pc::with_timeout(p, 60s, after(p, 60s, 1, e, c));
  };
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    source.request_stop();
  });
  bool timed_out = false, cancelled_caught = false;
  try {
    pc::sync_wait(pool, pc::with_stop_token(source.get_token(), body(pool, ended, cancelled)));
  } catch (const pc::timed_out&) {
    timed_out = true;
  } catch (const pc::operation_cancelled&) {
    cancelled_caught = true;
  }
  stopper.join();
  CHECK_FALSE(timed_out);
  CHECK(cancelled_caught);
  CHECK(cancelled.load() == 1);
}

TEST_CASE(
    "with_timeout(duration, task): the timer on the current thread_pool; a textbook_pool is told to pass "
    "one") {
  pc::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  auto slow = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    co_return co_await pc::with_timeout(10ms, after(p, 60s, 1, e, c));
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, slow(pool, ended, cancelled)), pc::timed_out);
  CHECK(cancelled.load() == 1);
  auto in_time = [](pc::thread_pool& p, std::atomic<int>& e, std::atomic<int>& c) -> pc::task<int> {
    co_return co_await pc::with_timeout(60s, after(p, 1ms, 9, e, c));
  };
  CHECK(pc::sync_wait(pool, in_time(pool, ended, cancelled)) == 9);

  pc::textbook_pool textbook(1);
  auto on_textbook = []() -> pc::task<int> {
    co_return co_await pc::with_timeout(10ms, coro_test::value(1));
  };
  CHECK_THROWS_AS(pc::sync_wait(textbook, on_textbook()), std::logic_error);
}
