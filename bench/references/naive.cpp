// bench_naive — a new std::thread per task (pools::thread_per_task_executor), at most T alive
// at once so a burst cannot exhaust the machine. What "just start a thread" costs.
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/thread_per_task_executor.hpp>

#include <memory>

namespace {
auto make = [](unsigned threads) { return std::make_unique<pools::thread_per_task_executor>(threads); };
}

int main(int argc, char** argv) {
  using namespace pools::bench;
  suite s("naive");
  s.add("fib", cps::fib_workload(make));
  s.add("skynet", cps::skynet_workload(make));
  s.add("nqueens", cps::nqueens_workload(make));
  s.add("matmul", cps::matmul_workload(make));
  s.add("submit", submit_workload(make));
  s.add("submit_future", submit_future_workload(make));
  s.add("wakeup", wakeup_workload(make));
  s.add("vector_fill", vector_fill_workload(make));
  s.unsupported("memory",
                "a suspended task is a blocked thread here; 100,000 of them exceed the thread cap "
                "(and would reserve 100,000 8 MiB stacks)");
  return s.main(argc, argv);
}
