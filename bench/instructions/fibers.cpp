// SPDX-License-Identifier: MIT
// instr_fibers — the fiber pool's hot paths for the instruction-count guard
// (bench/instructions.py; how counting stays deterministic: measure.hpp).
//   fork_join  one binary fork and its join, as fib spells it: spawn a child, call the other
//              half, join the child (run inline by the join when no one has started it), in a
//              fiber on the pool's one worker
//   post_run   pool.post of an empty callable from a fiber, and its run (measure.hpp)
//   yield      a fiber switch: two fibers on the one worker take turns with this_fiber::yield();
//              one n is a round trip, two switches
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>

#include <cstdint>
#include <string>

#include "measure.hpp"

namespace {
using namespace pools::bench::instructions;
using pools::fibers::thread_pool;

void fork_join(std::int64_t n) {
  thread_pool pool(1);
  const std::int64_t sum = pool.run([&pool, n] {
    std::int64_t s = 0;
    collect_toggle();  // on, on the worker
    for (std::int64_t i = 0; i < n; ++i) {
      auto child = pool.spawn([] { return one(); });
      const std::int64_t mine = one();
      s += child.join() + mine;
    }
    collect_toggle();  // off
    return s;
  });
  if (sum != 2 * n) wrong("fork_join summed " + std::to_string(sum));
}

void yields(std::int64_t n) {
  thread_pool pool(1);
  std::int64_t turns = 0;
  pool.run([&pool, &turns, n] {
    // The partner starts at the first yield below and then alternates with this fiber; both
    // stay on the one worker, so `turns` needs no atomics.
    auto partner = pool.spawn([&turns, n] {
      for (std::int64_t i = 0; i < n; ++i) {
        ++turns;
        pools::fibers::this_fiber::yield();
      }
    });
    collect_toggle();  // on
    for (std::int64_t i = 0; i < n; ++i) {
      ++turns;
      pools::fibers::this_fiber::yield();
    }
    collect_toggle();  // off
    partner.join();
  });
  if (turns != 2 * n) wrong("yield took " + std::to_string(turns) + " turns");
}

}  // namespace

int main(int argc, char** argv) {
  return main_for(argc, argv,
                  {{"fork_join", {fork_join}},
                   {"post_run", {[](std::int64_t n) {
                      thread_pool pool(1);
                      post_and_run(pool, n);
                    }}},
                   {"yield", {yields, 2}}});
}
