// SPDX-License-Identifier: MIT
// pools/sim/measure.hpp — the command line of a program with a seeded bug: how often it fails on
// the real pool, and how many seeds each strategy needs (docs/testing-schedules.md, "Measured").
//
//   int main(int argc, char** argv) {
//     return pools::sim::measure_main(argc, argv, {"coroutines: cache_stampede", real_run_fails, simulated});
//   }
//
//   PROGRAM                          the table row: 1,000 real runs, then seeds 1..1,000 of random
//                                    walk and of pct:2:60, counted
//   PROGRAM --real N                 N runs on the real pool
//   PROGRAM --explore S [--seeds N]  strategy S: stop at the first failing seed, print its schedule,
//                                    the replay line and the trace (POOLS_SIM_SEED=N replays)
//
// Exit status: 0 when the measurement ran (a found bug is the expected result), 1 when --explore
// found nothing, 2 for a bad argument (with the usage).
#pragma once

#include <pools/sim/scheduler.hpp>

#include <functional>
#include <string>

namespace pools::sim {

struct bug_program {
  std::string name;                           // the table's first column
  std::function<bool()> real_run_fails;       // one run on the real pool: true when it went wrong
  std::function<void(scheduler&)> simulated;  // one run on the simulator: throws when it went wrong
};

int measure_main(int argc, char** argv, const bug_program& program);

}  // namespace pools::sim
