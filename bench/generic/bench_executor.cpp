// SPDX-License-Identifier: MIT
// bench_<name> for any pools::Executor: every workload written against the concept alone.
//
// Built for a registered variant that has no bench/ folder of its own (pools_add_variant), over
// its first executor type, and for the naive reference (pools::thread_per_task_executor). The
// type and the subject's name come from a header CMake generates for each target
// (pools_generated_executor.hpp: pools::generated::executor and ::name).
//
// Fork-join is continuation-passing (pools/bench/cps_workloads.hpp): with nothing but post(), a
// task cannot wait for its children, so the last child to finish continues the parent.
// submit, submit_future, wakeup and vector_fill go through post() and pools::submit.
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/harness.hpp>

#include <memory>
#include <pools_generated_executor.hpp>

int main(int argc, char** argv) {
  using namespace pools::bench;
  using executor = pools::generated::executor;
  auto make = [](unsigned threads) { return std::make_unique<executor>(threads); };

  suite s(pools::generated::name);
  cps::add_post_only_workloads(s, make);
  s.unsupported("memory",
                "the Executor concept has no way to suspend a task: a task that waits holds its thread, so "
                "100,000 suspended tasks would need 100,000 threads");
  return s.main(argc, argv);
}
