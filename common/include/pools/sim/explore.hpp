// SPDX-License-Identifier: MIT
// pools/sim/explore.hpp — run a program under many seeds, stop at the first that fails, replay it.
//
//   auto r = pools::sim::explore({.runs = 1000, .strategy = "pct:2", .program = argv[0]},
//                                [](pools::sim::scheduler& s) {
//                                  pools::coroutines::simulated pool(s);
//                                  pool.run(my_test(pool));   // throws when a check fails
//                                });
//
// Each run is one seed: a fresh scheduler, the program, its run. A run *fails* when anything
// escapes it: an exception of the program (a failed check), a deadlock (deadlock_error), too many
// steps (step_limit_error). At the first failure explore() stops and prints the seed, the error,
// the failing run's last steps and the one line that replays it:
//
//   pools::sim: seed 17 failed (strategy pct:2:200, run 17 of 1000, 41 steps): balance 90, expected 80
//   ...
//   replay: POOLS_SIM_SEED=17 POOLS_SIM_STRATEGY=pct:2:200 build/examples/sim_bank
//   trace:  pools-sim-seed-17.json (open in https://ui.perfetto.dev)
//
// Replay: with POOLS_SIM_SEED=N in the environment explore() runs seed N alone (and
// POOLS_SIM_STRATEGY, when set, replaces options::strategy), so the printed line reruns exactly
// the failing schedule — under a debugger too. A bad value is an std::invalid_argument saying why.
#pragma once

#include <pools/sim/scheduler.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace pools::sim {

struct explore_options {
  std::uint64_t runs = 1000;  // seeds first_seed, first_seed + 1, ...
  std::uint64_t first_seed = 1;
  std::string strategy = "random";  // make_strategy()'s names: random, pct, pct:D, pct:D:N
  std::string program;              // the command that starts this program, for the replay line
  std::string trace_path;           // the failing run's trace; empty: pools-sim-seed-<N>.json; "-": none
  std::FILE* out = stderr;          // where a failure is printed; nullptr: nowhere
  std::size_t schedule_lines = 20;  // the failing run's last steps, printed
  scheduler::options sim{};
};

struct explore_result {
  bool failed = false;
  std::uint64_t runs = 0;   // runs made (the failing one included)
  std::uint64_t seed = 0;   // the failing seed
  std::uint64_t steps = 0;  // steps of the failing run
  std::string error;        // what escaped it
  std::string schedule;     // its last steps (scheduler::schedule_text)
  std::string replay;       // the one-line command that replays it
  std::string trace_file;   // where its trace went (empty: none written)
};

/// Runs `program` once per seed (see above); stops at the first failure.
explore_result explore(explore_options opts, const std::function<void(scheduler&)>& program);

/// Runs `program` under one seed and strategy; returns the scheduler after the run, which the
/// caller can read (schedule(), write_trace()). Throws what the run throws.
std::unique_ptr<scheduler> run_once(std::uint64_t seed, const std::string& strategy,
                                    const std::function<void(scheduler&)>& program,
                                    scheduler::options sim = {});

}  // namespace pools::sim
