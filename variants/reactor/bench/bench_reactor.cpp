// bench_reactor — the callback reactor under either strategy.
//
//   POOLS_REACTOR_STRATEGY=per_thread|shared bench_reactor --workload fib ...
//
// The harness command line is shared by every subject, so the strategy comes from the
// environment. Unset, the strategy is per_thread and the record's variant is "reactor" (what the
// build registered); set, the variant is "reactor/<strategy>", so two runs never mix up.
// Fork-join is continuation-passing (pools/bench/cps_workloads.hpp): a reactor handler must not
// block on its children, it leaves a join counter and the last child continues. "memory" is n
// pending timers, the reactor's notion of a suspended task.
#include <pools/bench/asio_workloads.hpp>
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strategy.hpp>

#include <fmt/core.h>

#include <cstdlib>
#include <memory>
#include <string>

namespace {
using namespace pools::bench;
using pools::reactor::strategy;

struct choice {
  strategy chosen = strategy::per_thread;
  std::string variant = "reactor";
};

choice strategy_from_environment() {
  const char* value = std::getenv("POOLS_REACTOR_STRATEGY");
  if (value == nullptr) return {};
  const auto parsed = pools::reactor::parse_strategy(value);
  if (!parsed) {
    fail_usage(fmt::format("POOLS_REACTOR_STRATEGY='{}' is not a strategy; use per_thread or shared", value));
  }
  return {*parsed, "reactor/" + std::string(pools::reactor::to_string(*parsed))};
}

}  // namespace

int main(int argc, char** argv) {
  const choice c = strategy_from_environment();
  auto make = [s = c.chosen](unsigned threads) {
    return std::make_unique<pools::reactor::executor>(threads, s);
  };

  suite s(c.variant);
  s.add("fib", cps::fib_workload(make));
  s.add("skynet", cps::skynet_workload(make));
  s.add("nqueens", cps::nqueens_workload(make));
  s.add("matmul", cps::matmul_workload(make));
  s.add("submit", submit_workload(make));
  s.add("submit_future", submit_future_workload(make));
  s.add("wakeup", wakeup_workload(make));
  s.add("vector_fill", vector_fill_workload(make));
  // Timers spread over the io_contexts as connections would be: round-robin under per_thread.
  s.add("memory", asio_timer_memory_workload(make, [](pools::reactor::executor& ex, std::size_t i) {
          return ex.context(i % ex.context_count()).get_executor();
        }));
  return s.main(argc, argv);
}
