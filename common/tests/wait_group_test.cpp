// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

TEST_CASE("wait_group: a zero count does not block") {
  pools::wait_group wg;
  wg.wait();
  CHECK(wg.wait_for(0ms));
}

TEST_CASE("wait_group: waits for every done() and sees the workers' writes") {
  constexpr int n = 16;
  pools::wait_group wg(n);
  std::vector<int> results(n, 0);
  std::vector<std::jthread> workers;
  for (int i = 0; i < n; ++i) {
    workers.emplace_back([&, i] {
      results[static_cast<std::size_t>(i)] = i + 1;  // plain write, published by done()
      wg.done();
    });
  }
  wg.wait();
  for (int i = 0; i < n; ++i) CHECK(results[static_cast<std::size_t>(i)] == i + 1);
}

TEST_CASE("wait_group: wait_for times out while work is pending, add() re-arms it") {
  pools::wait_group wg;
  wg.add(1);
  CHECK_FALSE(wg.wait_for(5ms));
  wg.done();
  CHECK(wg.wait_for(0ms));
  wg.add(2);
  CHECK(wg.count() == 2);
  CHECK_FALSE(wg.wait_for(1ms));
  wg.done();
  wg.done();
  wg.wait();
}

TEST_CASE("wait_group: the waiter may destroy it the moment wait() returns") {
  // Run under the asan/tsan presets this catches a done() that touches the object after
  // releasing the waiter.
  for (int round = 0; round < 2000; ++round) {
    auto wg = std::make_unique<pools::wait_group>(1);
    std::jthread t([w = wg.get()] { w->done(); });
    wg->wait();
    wg.reset();
  }
}
