// SPDX-License-Identifier: MIT
// The command line of the seeded-bug programs (pools/sim/measure.hpp).
#include <pools/sim/explore.hpp>
#include <pools/sim/measure.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace pools::sim {

namespace {

int real_failures(const bug_program& p, int runs) {
  int failed = 0;
  for (int i = 0; i < runs; ++i)
    if (p.real_run_fails()) ++failed;
  return failed;
}

// How many of seeds 1..n fail, and the first that does (0: none).
std::pair<int, std::uint64_t> failing_seeds(const bug_program& p, const std::string& strategy, int n) {
  int failed = 0;
  std::uint64_t first = 0;
  for (int seed = 1; seed <= n; ++seed) {
    try {
      (void)run_once(static_cast<std::uint64_t>(seed), strategy, p.simulated);
    } catch (const std::exception&) {
      ++failed;
      if (first == 0) first = static_cast<std::uint64_t>(seed);
    }
  }
  return {failed, first};
}

int parse_count(std::string_view s) {
  int n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc{} || end != s.data() + s.size() || n <= 0)
    throw std::invalid_argument(fmt::format("'{}' is not a positive count", s));
  return n;
}

}  // namespace

int measure_main(int argc, char** argv, const bug_program& program) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  try {
    if (args.empty()) {
      const int real = real_failures(program, 1000);
      const auto [random_failed, random_first] = failing_seeds(program, "random", 1000);
      const auto [pct_failed, pct_first] = failing_seeds(program, "pct:2:60", 1000);
      fmt::print(
          "| program | real pool: runs of 1,000 that fail | random walk: first failing seed; failing seeds "
          "of 1,000 | pct:2:60: first failing seed; failing seeds of 1,000 |\n|---|---:|---:|---:|\n");
      fmt::print("| {} | {} | {}; {} | {}; {} |\n", program.name, real, random_first, random_failed,
                 pct_first, pct_failed);
      return 0;
    }
    if (args[0] == "--real" && args.size() == 2) {
      const int runs = parse_count(args[1]);
      fmt::print("real pool: {} of {} runs failed\n", real_failures(program, runs), runs);
      return 0;
    }
    if (args[0] == "--explore" && (args.size() == 2 || (args.size() == 4 && args[2] == "--seeds"))) {
      explore_options o;
      o.strategy = std::string(args[1]);
      o.runs = args.size() == 4 ? static_cast<std::uint64_t>(parse_count(args[3])) : 1000;
      o.program = fmt::format("{} --explore {}", argv[0], o.strategy);
      o.out = stdout;
      o.schedule_lines = 0;
      const auto r = explore(o, program.simulated);
      if (!r.failed) fmt::print("no failure in {} seeds\n", r.runs);
      return r.failed ? 0 : 1;
    }
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "{}: {}\n", argv[0], e.what());
    return 2;
  }
  fmt::print(stderr, "usage: {} [--real N | --explore STRATEGY [--seeds N]]\n", argv[0]);
  return 2;
}

}  // namespace pools::sim
