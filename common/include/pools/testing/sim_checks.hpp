// SPDX-License-Identifier: MIT
// pools/testing/sim_checks.hpp — what the simulator tests of every variant check
// (variants/*/tests/simulated_test.cpp; docs/testing-schedules.md):
//
//   sim_trace_text(engine, name)   a simulated run's Perfetto trace as text, to compare byte for
//                                  byte (the same seed writes the same trace)
//   check_found_and_replayed(program, runs, error)
//                                  explore() finds a failing seed of `program` within `runs` seeds,
//                                  failing with `error`, and that seed replays the same schedule
#pragma once

#include <doctest/doctest.h>

#include <pools/sim/explore.hpp>
#include <pools/sim/scheduler.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>

namespace pools::testing {

/// What engine.write_trace() writes, read back from pools_sim_<name>_<pid>.json in the temporary
/// directory, which is removed again.
inline std::string sim_trace_text(const pools::sim::scheduler& engine, std::string_view name) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("pools_sim_" + std::string(name) + "_" + std::to_string(::getpid()) + ".json");
  engine.write_trace(path.string());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

/// Random walk over seeds 1..runs (quietly: nothing printed, no trace file) finds a seed whose run
/// fails with `error`; run_once() of that seed fails the same way, with the same schedule.
inline void check_found_and_replayed(const std::function<void(pools::sim::scheduler&)>& program,
                                     std::uint64_t runs, const std::string& error) {
  pools::sim::explore_options o;
  o.runs = runs;
  o.out = nullptr;
  o.trace_path = "-";
  const auto r = pools::sim::explore(o, program);
  REQUIRE(r.failed);
  CHECK(r.error == error);
  const auto again = pools::sim::run_once(r.seed, "random", [&](pools::sim::scheduler& engine) {
    CHECK_THROWS_WITH(program(engine), error.c_str());
  });
  CHECK(again->schedule_text() == r.schedule);
}

}  // namespace pools::testing
