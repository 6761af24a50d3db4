// SPDX-License-Identifier: MIT
// The explorer (pools/sim/explore.hpp): many seeds, the first failure, the replay line.
#include <pools/sim/explore.hpp>

#include <fmt/core.h>

#include <charconv>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string_view>

namespace pools::sim {

namespace {

// POOLS_SIM_SEED and POOLS_SIM_STRATEGY override the options: that is how a replay line works.
void apply_environment(explore_options& opts) {
  if (const char* seed = std::getenv("POOLS_SIM_SEED"); seed != nullptr) {
    const std::string_view s(seed);
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size())
      throw std::invalid_argument(fmt::format(
          "POOLS_SIM_SEED='{}' is not a seed: give a whole number (the one a failed run printed)", s));
    opts.first_seed = n;
    opts.runs = 1;
  }
  if (const char* strategy = std::getenv("POOLS_SIM_STRATEGY"); strategy != nullptr) opts.strategy = strategy;
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

std::unique_ptr<scheduler> run_once(std::uint64_t seed, const std::string& strategy,
                                    const std::function<void(scheduler&)>& program, scheduler::options sim) {
  auto s = std::make_unique<scheduler>(make_strategy(strategy), seed, sim);
  program(*s);
  return s;
}

explore_result explore(explore_options opts, const std::function<void(scheduler&)>& program) {
  apply_environment(opts);
  (void)make_strategy(opts.strategy);  // a bad name fails before the first run, with its message
  explore_result r;
  for (std::uint64_t i = 0; i < opts.runs; ++i) {
    const std::uint64_t seed = opts.first_seed + i;
    scheduler s(make_strategy(opts.strategy), seed, opts.sim);
    ++r.runs;
    std::exception_ptr error;
    try {
      program(s);
    } catch (...) {
      error = std::current_exception();
    }
    if (!error) continue;

    r.failed = true;
    r.seed = seed;
    r.steps = s.steps();
    r.error = what_of(error);
    r.schedule = s.schedule_text(opts.schedule_lines);
    const std::string spec = s.strategy_used().spec();
    r.replay = fmt::format("POOLS_SIM_SEED={} POOLS_SIM_STRATEGY={} {}", seed, spec,
                           opts.program.empty() ? "<this program>" : opts.program);
    if (opts.trace_path != "-") {
      r.trace_file = opts.trace_path.empty() ? fmt::format("pools-sim-seed-{}.json", seed) : opts.trace_path;
      try {
        s.write_trace(r.trace_file);
      } catch (const std::exception& x) {
        r.trace_file.clear();  // the failure still gets reported; the trace's own failure with it
        r.error += fmt::format(" (and the trace was not written: {})", x.what());
      }
    }
    if (opts.out != nullptr) {
      fmt::print(opts.out, "pools::sim: seed {} failed (strategy {}, run {} of {}, {} steps): {}\n", seed,
                 spec, r.runs, opts.runs, r.steps, r.error);
      fmt::print(opts.out, "the last steps of that run:\n{}", r.schedule);
      fmt::print(opts.out, "replay: {}\n", r.replay);
      if (!r.trace_file.empty())
        fmt::print(opts.out, "trace:  {} (open in https://ui.perfetto.dev)\n", r.trace_file);
    }
    return r;
  }
  return r;
}

}  // namespace pools::sim
