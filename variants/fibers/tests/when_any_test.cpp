// SPDX-License-Identifier: MIT
// when_any and with_timeout on fibers: the first to finish wins, the others are stopped and have
// ended when the call returns (counted), an exception is delivered, a loser that ignores its token
// is still joined, the timeout is a stop on a timer, and a stop from above is a cancellation, not
// a time-out. Also on the simulated pool, where 30 s of timeout take no wall time.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/fibers/simulated.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/fibers/when_any.hpp>
#include <pools/fibers/with_timeout.hpp>
#include <pools/sim/scheduler.hpp>
#include <pools/sim/strategy.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pf = pools::fibers;
namespace sim = pools::sim;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// A racer that sleeps `d` (cancellably) and returns `value`; counts how it ended.
struct sleeper {
  std::chrono::milliseconds d;
  int value;
  std::atomic<int>* ended;
  std::atomic<int>* cancelled;
  int operator()() const {
    struct count_end {
      std::atomic<int>* n;
      ~count_end() { n->fetch_add(1); }
    } on_exit{ended};
    try {
      pf::this_fiber::sleep_for(d);
    } catch (const pf::operation_cancelled&) {
      cancelled->fetch_add(1);
      throw;
    }
    return value;
  }
};

}  // namespace

TEST_CASE("when_any: the first to finish wins; the others are stopped and have ended when it returns") {
  pf::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  const auto start = clock_type::now();
  const auto r = pool.run([&] {
    return pf::when_any(pool, sleeper{60s, 1, &ended, &cancelled}, sleeper{1ms, 2, &ended, &cancelled},
                        sleeper{60s, 3, &ended, &cancelled});
  });
  const int ended_at_return = ended.load();
  CHECK(r.index == 1);
  CHECK(r.value == 2);
  CHECK(ended_at_return == 3);  // no racer outlives the call
  CHECK(cancelled.load() == 2);
  CHECK(clock_type::now() - start < 10s);

  // From a plain thread too (the joins block the thread).
  const auto t = pf::when_any(pool, sleeper{60s, 1, &ended, &cancelled}, sleeper{0ms, 7, &ended, &cancelled});
  CHECK(t.index == 1);
  CHECK(t.value == 7);
  CHECK(ended.load() == 5);
}

TEST_CASE("when_any: an exception that finishes first is delivered; a vector of callables works too") {
  pf::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  auto fails = []() -> int { throw fibers_test::custom_error(5); };
  try {
    (void)pf::when_any(pool, sleeper{60s, 1, &ended, &cancelled}, fails);
    FAIL("when_any returned");
  } catch (const fibers_test::custom_error& e) {
    CHECK(e.code == 5);
  }
  CHECK(ended.load() == 1);
  CHECK(cancelled.load() == 1);

  std::vector<std::function<int()>> racers;
  for (int i = 0; i < 8; ++i) racers.emplace_back(sleeper{i == 5 ? 1ms : 60s, 100 + i, &ended, &cancelled});
  const auto r = pool.run([&] { return pf::when_any(pool, std::move(racers)); });
  CHECK(r.index == 5);
  CHECK(r.value == 105);
  CHECK(ended.load() == 9);
  CHECK(cancelled.load() == 8);
  CHECK_THROWS_AS(pf::when_any(pool, std::vector<std::function<int()>>{}), std::invalid_argument);

  // void racers: only the index.
  std::atomic<int> ran{0};
  const auto v = pf::when_any(
      pool, [&] { ran.fetch_add(1); },
      [&] {
        pf::this_fiber::sleep_for(60s);
        ran.fetch_add(10);
      });
  CHECK(v.index == 0);
  CHECK(ran.load() == 1);  // the sleeper was cancelled before it counted
}

TEST_CASE("when_any: a loser that ignores its token is still joined") {
  pf::thread_pool pool(2);
  std::atomic<bool> loser_done{false};
  const auto r = pool.run([&] {
    return pf::when_any(
        pool, [] { return 1; },
        [&] {
          std::this_thread::sleep_for(20ms);  // blocks its worker, reads no token
          loser_done = true;
          return 2;
        });
  });
  CHECK(r.index == 0);
  CHECK(loser_done.load());
}

TEST_CASE("when_any: many races, each racer ending once (counted)") {
  pf::thread_pool pool(2);
  const int races = fibers_test::sanitized() ? 50 : 300;
  std::atomic<int> ended{0}, cancelled{0};
  std::atomic<int> wins_first{0}, wins_second{0};
  std::vector<pf::join_handle<void>> callers;
  for (int i = 0; i < races; ++i) {
    callers.push_back(pool.spawn([&, i] {
      const auto r = pf::when_any(pool, sleeper{std::chrono::milliseconds(i % 2), 0, &ended, &cancelled},
                                  sleeper{std::chrono::milliseconds((i + 1) % 2), 1, &ended, &cancelled});
      (r.value == 0 ? wins_first : wins_second).fetch_add(1);
    }));
  }
  for (auto& c : callers) c.join();
  CHECK(wins_first.load() + wins_second.load() == races);
  CHECK(ended.load() == 2 * races);
  CHECK(cancelled.load() <= races);  // only losers are cancelled, at most one per race
}

TEST_CASE("when_any: a stop from above reaches every racer; the first to end delivers its cancellation") {
  pf::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  std::stop_source source;
  auto caller = pool.spawn(source.get_token(), [&] {
    try {
      (void)pf::when_any(pool, sleeper{60s, 1, &ended, &cancelled}, sleeper{60s, 2, &ended, &cancelled});
      return false;
    } catch (const pf::operation_cancelled&) {
      return true;
    }
  });
  std::this_thread::sleep_for(5ms);  // usually in their sleeps by now; stopped earlier, they throw at once
  source.request_stop();
  CHECK(caller.join());
  CHECK(ended.load() == 2);
  CHECK(cancelled.load() == 2);
}

TEST_CASE("with_timeout: the value before the deadline; timed_out after it, once the call has ended") {
  pf::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0};
  const auto start = clock_type::now();
  CHECK(pool.run([&] { return pf::with_timeout(pool, 10s, sleeper{1ms, 42, &ended, &cancelled}); }) == 42);
  CHECK(clock_type::now() - start < 5s);  // the 10 s timer was cancelled, not waited for
  CHECK(ended.load() == 1);

  const auto timed = clock_type::now();
  CHECK_THROWS_AS(pool.run([&] { return pf::with_timeout(pool, 20ms, sleeper{60s, 1, &ended, &cancelled}); }),
                  pf::timed_out);
  CHECK(clock_type::now() - timed >= 20ms);
  CHECK(ended.load() == 2);  // the stopped call had ended when with_timeout threw
  CHECK(cancelled.load() == 1);

  // An exception of the call is delivered as it is.
  CHECK_THROWS_WITH_AS(pool.run([&] {
    return pf::with_timeout(pool, 10s, []() -> int { throw std::runtime_error("call failed"); });
  }),
                       "call failed", std::runtime_error);

  // A call that ignores its token is not cut short, and the deadline still wins. (It yields: a
  // call that blocks its worker could hold the only worker free to fire the timer, README
  // "Pitfalls".)
  std::atomic<bool> finished{false};
  CHECK_THROWS_AS(pf::with_timeout(pool, 5ms,
                                   [&] {
                                     const auto until = clock_type::now() + 30ms;
                                     while (clock_type::now() < until) pf::this_fiber::yield();
                                     finished = true;
                                   }),
                  pf::timed_out);
  CHECK(finished.load());
}

TEST_CASE("with_timeout: a stop from above is a cancellation, not a time-out") {
  pf::thread_pool pool(2);
  std::atomic<int> ended{0}, cancelled{0}, outcome_cancelled{0}, outcome_timed_out{0};
  std::stop_source source;
  auto caller = pool.spawn(source.get_token(), [&] {
    try {
      (void)pf::with_timeout(pool, 60s, sleeper{60s, 1, &ended, &cancelled});
    } catch (const pf::timed_out&) {
      outcome_timed_out.fetch_add(1);
    } catch (const pf::operation_cancelled&) {
      outcome_cancelled.fetch_add(1);
    }
  });
  std::this_thread::sleep_for(5ms);  // usually in their sleeps by now; stopped earlier, they throw at once
  source.request_stop();
  caller.join();
  CHECK(outcome_cancelled.load() == 1);
  CHECK(outcome_timed_out.load() == 0);
  CHECK(ended.load() == 1);
}

TEST_CASE("with_timeout on the simulated pool: a 30 s deadline on the virtual clock, no wall time") {
  sim::scheduler engine(sim::make_strategy("random"), 3);
  pf::simulated pool(engine);
  pf::channel<int> never;
  const auto wall = clock_type::now();
  const std::string result = pool.run([&] {
    try {
      return std::to_string(pf::with_timeout(pool, 30s, [&] { return *never.recv(); }));
    } catch (const pf::timed_out&) {
      return std::string("timed out");
    }
  });
  CHECK(result == "timed out");
  CHECK(engine.now() >= sim::virtual_clock::time_point{} + 30s);
  CHECK(engine.now() < sim::virtual_clock::time_point{} + 31s);
  CHECK(clock_type::now() - wall < 5s);
}
