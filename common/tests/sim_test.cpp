// SPDX-License-Identifier: MIT
// pools::sim's core (pools/sim/): determinism, exploration, virtual time, deadlock reports, PCT.
// The variants' adapters have their own tests (variants/*/tests/simulated_test.cpp).
#include <doctest/doctest.h>

#include <pools/sim/explore.hpp>
#include <pools/sim/pct.hpp>
#include <pools/sim/random_walk.hpp>
#include <pools/sim/scheduler.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sim = pools::sim;
using namespace std::chrono_literals;

namespace {

// A task of `n` steps, each queued by the one before (so the task never has two ready steps),
// each appending "<name><i>" to a shared log.
void chain(sim::scheduler& s, sim::task_id t, int i, int n, std::vector<std::string>& log) {
  log.push_back(s.name_of(t) + std::to_string(i));
  if (i + 1 < n) s.ready(t, [&s, t, i, n, &log] { chain(s, t, i + 1, n, log); });
}

// Three tasks of four steps each: the order of the log is the schedule.
std::vector<std::string> three_chains(sim::scheduler& s) {
  std::vector<std::string> log;
  for (const char* name : {"a", "b", "c"}) {
    const sim::task_id t = s.new_task(name);
    s.ready(t, [&s, t, &log] { chain(s, t, 0, 4, log); });
  }
  s.run();
  return log;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

}  // namespace

TEST_CASE("a seed is one schedule: the same seed twice gives the same steps and the same trace") {
  for (const char* strategy : {"random", "pct:3:20"}) {
    CAPTURE(strategy);
    sim::scheduler s1(sim::make_strategy(strategy), 42);
    sim::scheduler s2(sim::make_strategy(strategy), 42);
    const auto log1 = three_chains(s1);
    const auto log2 = three_chains(s2);
    CHECK(log1.size() == 12);
    CHECK(log1 == log2);
    CHECK(s1.schedule_text() == s2.schedule_text());
    const std::string p1 = temp_path("pools_sim_test_trace1.json");
    const std::string p2 = temp_path("pools_sim_test_trace2.json");
    s1.write_trace(p1);
    s2.write_trace(p2);
    const std::string t1 = file_text(p1);
    CHECK(t1.find("\"task 0 a\"") != std::string::npos);
    CHECK(t1 == file_text(p2));
    std::filesystem::remove(p1);
    std::filesystem::remove(p2);
  }
}

TEST_CASE("different seeds explore different orders") {
  for (const char* strategy : {"random", "pct:3:20"}) {
    CAPTURE(strategy);
    std::set<std::vector<std::string>> orders;
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
      sim::scheduler s(sim::make_strategy(strategy), seed);
      orders.insert(three_chains(s));
    }
    // 12!/(4!^3) = 34,650 interleavings: fifty seeds that found fewer than ten would be no explorer.
    CHECK(orders.size() >= 10);
  }
}

TEST_CASE("a task's own steps keep their order") {
  sim::scheduler s(sim::make_strategy("random"), 7);
  const sim::task_id t = s.new_task("t");
  const sim::task_id u = s.new_task("u");
  std::vector<int> seen;
  for (int i = 0; i < 20; ++i) {
    s.ready(t, [&seen, i] { seen.push_back(i); });
    s.ready(u, [] {});
  }
  s.run();
  REQUIRE(seen.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("virtual time: a 30 s timeout takes no wall time, and fires in due order") {
  sim::scheduler s(sim::make_strategy("random"), 1);
  const sim::task_id waiter = s.new_task("waiter");
  const sim::task_id worker = s.new_task("worker");
  std::vector<std::string> log;
  sim::virtual_clock::time_point fired{};
  s.ready(waiter, [&] {
    // A 30-second timeout and a reply that comes after 2 s: the reply wins, the timeout fires later.
    s.at(sim::virtual_clock::now() + 30s, waiter, [&] {
      fired = sim::virtual_clock::now();
      log.emplace_back("timeout");
    });
    s.at(sim::virtual_clock::now() + 2s, worker, [&] { log.emplace_back("reply"); });
  });
  const auto wall = std::chrono::steady_clock::now();
  s.run();
  const auto took = std::chrono::steady_clock::now() - wall;
  CHECK(log == std::vector<std::string>{"reply", "timeout"});
  CHECK(fired >= sim::virtual_clock::time_point{} + 30s);
  CHECK(fired < sim::virtual_clock::time_point{} + 30s + 1ms);
  CHECK(took < 1s);  // microseconds in practice; a second leaves room for a loaded machine
  MESSAGE("30 virtual seconds took " << std::chrono::duration<double, std::micro>(took).count() << " us");
}

TEST_CASE("a cancelled timer does not fire") {
  sim::scheduler s(sim::make_strategy("random"), 1);
  const sim::task_id t = s.new_task("t");
  bool fired = false;
  const auto id = s.at(sim::virtual_clock::time_point{} + 5s, t, [&] { fired = true; });
  CHECK(s.cancel(id));
  CHECK_FALSE(s.cancel(id));
  s.run();
  CHECK_FALSE(fired);
  CHECK(s.now() == sim::virtual_clock::time_point{});
}

TEST_CASE("a timer for a task that does not exist is refused when it is set, not when it fires") {
  sim::scheduler s(sim::make_strategy("random"), 1);
  const sim::task_id t = s.new_task("t");
  CHECK_THROWS_WITH_AS(s.at(sim::virtual_clock::time_point{} + 5s, t + 1, [] {}),
                       "pools::sim::scheduler::at(): no task 1 (1 tasks)", std::out_of_range);
  s.run();  // nothing was queued
  CHECK(s.now() == sim::virtual_clock::time_point{});
}

TEST_CASE("virtual_clock::now() outside a run says so") {
  CHECK_THROWS_AS(sim::virtual_clock::now(), std::logic_error);
}

TEST_CASE("deadlock: nothing can run, tasks wait: the report names each task and what it waits on") {
  sim::scheduler s(sim::make_strategy("random"), 3);
  const sim::task_id a = s.new_task("philosopher 0");
  const sim::task_id b = s.new_task("philosopher 1");
  const sim::task_id c = s.new_task("done early");
  s.ready(a, [&] { s.waiting(a, "fork 1"); });
  s.ready(b, [&] { s.waiting(b, "fork 0"); });
  s.ready(c, [] {});
  try {
    s.run();
    FAIL("no deadlock reported");
  } catch (const sim::deadlock_error& e) {
    const std::string what = e.what();
    MESSAGE(what);
    CHECK(what.find("nothing can run and 2 tasks wait") != std::string::npos);
    CHECK(what.find("task 0 \"philosopher 0\" waits on fork 1") != std::string::npos);
    CHECK(what.find("task 1 \"philosopher 1\" waits on fork 0") != std::string::npos);
    CHECK(what.find("done early") == std::string::npos);
    REQUIRE(e.waiters().size() == 2);
    CHECK(e.waiters()[1].what == "fork 0");
  }
}

TEST_CASE("a wait that is ended is no deadlock") {
  sim::scheduler s(sim::make_strategy("random"), 3);
  const sim::task_id a = s.new_task("a");
  const sim::task_id b = s.new_task("b");
  bool woken = false;
  // a waits, then hands b the job of waking it (a real primitive registers its waiter the same
  // way: before anyone can wake it).
  s.ready(a, [&] {
    s.waiting(a, "b's signal");
    s.ready(b, [&] { s.ready(a, [&] { woken = true; }); });
  });
  CHECK_NOTHROW(s.run());
  CHECK(woken);
}

TEST_CASE("an exception stops the run and keeps the schedule up to it") {
  sim::scheduler s(sim::make_strategy("random"), 5);
  const sim::task_id a = s.new_task("a");
  s.ready(a, [] {});
  s.ready(a, [] { throw std::runtime_error("check failed"); });
  s.ready(a, [] { FAIL("ran after the failure"); });
  CHECK_THROWS_WITH_AS(s.run(), "check failed", std::runtime_error);
  CHECK(s.steps() == 2);
}

TEST_CASE("point_before: the step's line names the operation it yields before, and the point is counted") {
  sim::scheduler s(sim::make_strategy("random"), 5);
  s.point_before("mutex lock");  // between steps: no step to end, nothing counted
  const sim::task_id a = s.new_task("a");
  s.ready(a, [&] {
    s.point_before("async_mutex lock");           // the adapter ends the step here...
    s.ready(a, [&] { s.annotate("finishes"); });  // ...and queues the one that does the lock
  });
  s.run();
  CHECK(s.points() == 1);
  CHECK(s.steps() == 2);
  CHECK(s.schedule()[0].note == "yields before async_mutex lock");
  CHECK(s.schedule_text().find("task 0 a: yields before async_mutex lock\n") != std::string::npos);
}

TEST_CASE("a livelock hits the step limit") {
  sim::scheduler::options o;
  o.max_steps = 1000;
  sim::scheduler s(sim::make_strategy("random"), 5, o);
  const sim::task_id a = s.new_task("spinner");
  std::function<void()> spin = [&] { s.ready(a, [&] { spin(); }); };
  s.ready(a, [&] { spin(); });
  CHECK_THROWS_AS(s.run(), sim::step_limit_error);
}

TEST_CASE("bad strategy names are refused, saying what is accepted") {
  for (const char* bad : {"", "pct:0", "pct:x", "pct:2:0", "pct2", "dfs", "pct:2:"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(sim::make_strategy(bad), std::invalid_argument);
  }
  CHECK_THROWS_WITH(sim::make_strategy("dfs"), doctest::Contains("use random, pct, pct:D"));
  CHECK(sim::make_strategy("pct")->spec() == "pct:3:200");
  CHECK(sim::make_strategy("pct:2:50")->spec() == "pct:2:50");
  CHECK(sim::make_strategy("random")->spec() == "random");
}

namespace {

// A depth-2 bug: task `observer` must run its one step after step 40 of the 50-step task `long`
// (constraint 1) and before its step 45 (constraint 2). Random walk nearly always lets the
// observer run in the first few steps; PCT finds it when `long` starts above the observer and a
// change point falls on steps 40-44.
void depth_two_bug(sim::scheduler& s) {
  int progress = -1;
  const sim::task_id longer = s.new_task("long");
  const sim::task_id observer = s.new_task("observer");
  std::function<void(int)> step = [&](int i) {
    progress = i;
    if (i + 1 < 50) s.ready(longer, [&step, i] { step(i + 1); });
  };
  s.ready(longer, [&step] { step(0); });
  s.ready(observer, [&progress] {
    if (progress >= 40 && progress < 45) throw std::runtime_error("observed the window");
  });
  s.run();
}

}  // namespace

TEST_CASE("PCT finds a depth-2 bug that random walk misses") {
  sim::explore_options o;
  o.runs = 2000;
  o.out = nullptr;
  o.trace_path = "-";
  o.strategy = "pct:2:60";
  const auto found = sim::explore(o, depth_two_bug);
  REQUIRE(found.failed);
  MESSAGE("pct:2:60 found it at seed " << found.seed << " after " << found.runs << " runs");
  CHECK(found.error == "observed the window");
  // The bound: at least 1/(n·k^(d-1)) = 1/(60·2) per run; 2,000 runs miss with probability < 1e-7.
  o.strategy = "random";
  const auto missed = sim::explore(o, depth_two_bug);
  CHECK_FALSE(missed.failed);  // needs ~40 "not you" in a row: 2^-40 per run
  CHECK(missed.runs == 2000);

  // And the seed replays: the same seed fails the same way, at the same step.
  const auto replay = sim::run_once(found.seed, "pct:2:60", [](sim::scheduler& s) {
    CHECK_THROWS_WITH(depth_two_bug(s), "observed the window");
  });
  CHECK(replay->steps() == found.steps);
}

TEST_CASE("explore stops at the first failing seed and prints the seed, the replay line, the trace") {
  const std::string trace = temp_path("pools_sim_test_explore.json");
  const std::string printed = temp_path("pools_sim_test_explore.txt");
  std::FILE* out = std::fopen(printed.c_str(), "w");
  REQUIRE(out != nullptr);
  sim::explore_options o;
  o.runs = 500;
  o.program = "build/common/tests_sim";
  o.trace_path = trace;
  o.out = out;
  int runs = 0;
  // Fails when c's first step runs before a's first: a third of the seeds, at random.
  const auto r = sim::explore(o, [&runs](sim::scheduler& s) {
    ++runs;
    const auto log = three_chains(s);
    if (std::find(log.begin(), log.end(), "c0") < std::find(log.begin(), log.end(), "a0"))
      throw std::runtime_error("c overtook a");
  });
  std::fclose(out);
  REQUIRE(r.failed);
  CHECK(runs == static_cast<int>(r.runs));
  CHECK(r.runs == r.seed);  // seeds 1, 2, ...: the failing one is the last run
  CHECK(r.replay ==
        "POOLS_SIM_SEED=" + std::to_string(r.seed) + " POOLS_SIM_STRATEGY=random build/common/tests_sim");
  const std::string text = file_text(printed);
  MESSAGE(text);
  CHECK(text.find("pools::sim: seed " + std::to_string(r.seed) + " failed") != std::string::npos);
  CHECK(text.find("replay: " + r.replay) != std::string::npos);
  CHECK(file_text(trace).find("traceEvents") != std::string::npos);
  std::filesystem::remove(trace);
  std::filesystem::remove(printed);

  // POOLS_SIM_SEED=N replays seed N alone.
  ::setenv("POOLS_SIM_SEED", std::to_string(r.seed).c_str(), 1);
  o.out = nullptr;
  o.trace_path = "-";
  runs = 0;
  const auto again = sim::explore(o, [&runs](sim::scheduler& s) {
    ++runs;
    const auto log = three_chains(s);
    if (std::find(log.begin(), log.end(), "c0") < std::find(log.begin(), log.end(), "a0"))
      throw std::runtime_error("c overtook a");
  });
  CHECK(runs == 1);
  CHECK(again.failed);
  CHECK(again.seed == r.seed);
  CHECK(again.schedule == r.schedule);
  ::setenv("POOLS_SIM_SEED", "twelve", 1);
  CHECK_THROWS_WITH_AS(sim::explore(o, [](sim::scheduler&) {}), doctest::Contains("is not a seed"),
                       std::invalid_argument);
  ::unsetenv("POOLS_SIM_SEED");
}
