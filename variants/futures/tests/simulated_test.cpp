// SPDX-License-Identifier: MIT
// The futures pool's post and submit on pools::sim (pools/futures/simulated.hpp): results, and a
// blocking get() inside a task stopping the run with the reason.
#include <doctest/doctest.h>

#include <pools/futures/simulated.hpp>
#include <pools/sim/blocking_wait.hpp>
#include <pools/sim/explore.hpp>

#include <stdexcept>
#include <string>

namespace pf = pools::futures;
namespace sim = pools::sim;

TEST_CASE("simulated futures: submit's results and exceptions, got after the run") {
  sim::scheduler s(sim::make_strategy("random"), 1);
  pf::simulated pool(s);
  int posted = 0;
  pool.post([&posted] { ++posted; });
  auto answer = pool.submit([] { return 6 * 7; });
  auto fails = pool.submit([]() -> int { throw std::runtime_error("task failed"); });
  auto nothing = pool.submit([] {});
  CHECK_FALSE(answer.is_ready());
  s.run();
  CHECK(posted == 1);
  CHECK(answer.get() == 42);
  CHECK_FALSE(answer.valid());
  CHECK_THROWS_WITH_AS(fails.get(), "task failed", std::runtime_error);
  CHECK_NOTHROW(nothing.get());
}

TEST_CASE("simulated futures: get() outside the tasks runs the simulation") {
  sim::scheduler s(sim::make_strategy("pct:2:10"), 3);
  pf::simulated pool(s);
  auto f = pool.submit([] { return std::string("done"); });
  CHECK(f.get() == "done");
}

TEST_CASE("simulated futures: a blocking get() inside a task stops the run and says why") {
  // The nested wait of variants/futures/README.md: a parent that submits a child and waits.
  sim::scheduler s(sim::make_strategy("random"), 1);
  pf::simulated pool(s);
  auto parent = pool.submit([&pool] {
    auto child = pool.submit([] { return 1; });
    return child.get() + 1;  // the child cannot run before this step returns
  });
  try {
    s.run();
    FAIL("the blocking get() did not stop the run");
  } catch (const sim::blocking_wait_error& e) {
    const std::string what = e.what();
    MESSAGE(what);
    CHECK(what.find("task 0 \"submit 1\" (step 0) called std::future::get() on a result that is not ready") !=
          std::string::npos);
    CHECK(what.find("A blocking wait cannot be simulated") != std::string::npos);
    CHECK(what.find("co_await") != std::string::npos);
  }
  CHECK_FALSE(parent.is_ready());
}

TEST_CASE("simulated futures: a get() that blocks under some schedules only is found by the explorer") {
  // Two tasks; the second gets the first's result. Under the seeds that run the first first, the
  // result is there and get() does not wait; under the others it would block: found, with a seed.
  sim::explore_options o;
  o.runs = 100;
  o.out = nullptr;
  o.trace_path = "-";
  int passed = 0;
  const auto r = sim::explore(o, [&passed](sim::scheduler& s) {
    pf::simulated pool(s);
    auto first = pool.submit([] { return 20; });
    auto second = pool.submit([&first] { return first.get() + 1; });
    s.run();
    CHECK(second.get() == 21);
    ++passed;
  });
  REQUIRE(r.failed);
  CHECK(r.error.find("A blocking wait cannot be simulated") != std::string::npos);
  MESSAGE(passed << " seed(s) passed before seed " << r.seed << " failed");
}
