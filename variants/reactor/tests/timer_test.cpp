// SPDX-License-Identifier: MIT
// post_after / post_at and timer_handle: deadlines, cancellation, and the drain.
#include <doctest/doctest.h>

#include <pools/reactor/counted.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/timer.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using pools::reactor::per_thread_executor;
using pools::reactor::post_after;
using pools::reactor::post_at;
using pools::reactor::shared_executor;
using clock_type = std::chrono::steady_clock;

namespace {
// Captured by scheduled tasks, to see when the task (and what it owns) is destroyed.
struct payload : pools::reactor::counted<payload> {};
}  // namespace

TEST_CASE_TEMPLATE("timer: post_after runs the task once, no earlier than the delay", E, per_thread_executor,
                   shared_executor) {
  E ex(2);
  pools::wait_group wg(1);
  std::atomic<int> runs{0};
  std::optional<clock_type::time_point> ran_at;
  const auto start = clock_type::now();
  auto handle = post_after(ex, 20ms, [&] {
    ran_at = clock_type::now();
    runs.fetch_add(1);
    wg.done();
  });
  wg.wait();
  REQUIRE(ran_at.has_value());
  CHECK(*ran_at - start >= 20ms);
  ex.stop();
  CHECK(runs.load() == 1);
  CHECK_FALSE(handle.pending());
  CHECK_FALSE(handle.cancel());  // too late: it ran
}

TEST_CASE_TEMPLATE("timer: post_at in the past runs promptly, and many deadlines all fire", E,
                   per_thread_executor, shared_executor) {
  E ex(2);
  const int n = reactor_test::scaled(2000);
  pools::wait_group wg(n + 1);
  post_at(ex, clock_type::now() - 1h, [&] { wg.done(); });
  for (int i = 0; i < n; ++i) post_after(ex, std::chrono::microseconds(i % 500), [&] { wg.done(); });
  CHECK(wg.wait_for(20s));
}

TEST_CASE_TEMPLATE("timer: cancel() prevents the run and releases the drain at once", E, per_thread_executor,
                   shared_executor) {
  std::atomic<int> runs{0};
  pools::reactor::timer_handle handle;
  const auto start = clock_type::now();
  {
    E ex(2);
    // 30 s, not an hour: if cancel() failed to release the wait, the test fails in bounded time.
    handle = post_after(ex, 30s, [&runs, p = std::make_shared<payload>()] { runs.fetch_add(1); });
    CHECK(handle.pending());
    CHECK(payload::live() == 1);
    CHECK(handle.cancel());
    CHECK_FALSE(handle.pending());
    CHECK_FALSE(handle.cancel());  // only once
  }  // drains: must not wait for the deadline
  CHECK(clock_type::now() - start < 10s);
  CHECK(runs.load() == 0);
  CHECK(payload::live() == 0);   // the cancelled task was destroyed, with what it owned
  CHECK_FALSE(handle.cancel());  // the handle outlived the executor: harmless
  CHECK_FALSE(handle.pending());
}

TEST_CASE_TEMPLATE("timer: run and cancel race, exactly one of them wins each time", E, per_thread_executor,
                   shared_executor) {
  const int n = reactor_test::scaled(5000);
  std::atomic<int> runs{0};
  int cancelled = 0;
  {
    E ex(2);
    std::vector<pools::reactor::timer_handle> handles;
    handles.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) handles.push_back(post_after(ex, 0ms, [&] { runs.fetch_add(1); }));
    for (auto& h : handles) cancelled += h.cancel() ? 1 : 0;
  }
  CHECK(runs.load() + cancelled == n);
  CHECK(payload::live() == 0);
}

TEST_CASE_TEMPLATE("timer: destruction waits for a pending task (accepted work is not dropped)", E,
                   per_thread_executor, shared_executor) {
  std::atomic<int> runs{0};
  const auto start = clock_type::now();
  {
    E ex(2);
    post_after(ex, 30ms, [&] { runs.fetch_add(1); });  // handle dropped: the task still runs
  }
  CHECK(runs.load() == 1);
  CHECK(clock_type::now() - start >= 30ms);
}

TEST_CASE_TEMPLATE("timer: an exception from a scheduled task is reported", E, per_thread_executor,
                   shared_executor) {
  reactor_test::exception_counter counter;
  {
    E ex(2);
    post_after(ex, 1ms, [] { throw std::runtime_error("boom"); });
  }
  CHECK(counter.reported() == 1);
}

TEST_CASE("timer: scheduling from outside after stop() throws executor_stopped") {
  per_thread_executor ex(2);
  ex.stop();
  CHECK_THROWS_AS(post_after(ex, 1ms, [] {}), pools::reactor::executor_stopped);
}
