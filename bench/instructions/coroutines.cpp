// SPDX-License-Identifier: MIT
// instr_coroutines — the coroutine pool's hot paths for the instruction-count guard
// (bench/instructions.py; how counting stays deterministic: measure.hpp).
//   fork_join  one binary fork and its join, as fib spells it: co_await when_all(leaf(), leaf())
//              inside a coroutine on the pool's one worker
//   fork_join_workfirst  the same binary fork and join, work-first as fib spells it with
//              fork_scope: fork(leaf), call(leaf), join — nobody steals on one worker, so this is
//              the inline path (no atomic read-modify-write of the join counter)
//   fork_join_framestack  the same work-first fork and join with stack_task (stack_task.hpp):
//              both children's frames bumped on the worker's stack of frames, not taken from the
//              frame free lists; the parent is a stack_task too (sync_wait's root), and it reads
//              the results by result(), as bench_coroutines's stack_task forms do
//   post_run   pool.post of an empty callable from a task, and its run (measure.hpp)
#include <pools/coroutines/coroutines.hpp>

#include <cstdint>
#include <string>
#include <utility>

#include "measure.hpp"

namespace {
namespace pc = pools::coroutines;
using namespace pools::bench::instructions;

pc::task<std::int64_t> leaf() {
  co_return one();
}

pc::task<std::int64_t> forks(std::int64_t n) {
  std::int64_t sum = 0;
  collect_toggle();  // on: the coroutine runs on the worker, and stays there (one worker)
  for (std::int64_t i = 0; i < n; ++i) {
    auto [a, b] = co_await pc::when_all(leaf(), leaf());
    sum += a + b;
  }
  collect_toggle();  // off
  co_return sum;
}

pc::task<std::int64_t> work_first_forks(std::int64_t n) {
  std::int64_t sum = 0;
  collect_toggle();  // on
  for (std::int64_t i = 0; i < n; ++i) {
    pc::task<std::int64_t> a = leaf(), b = leaf();
    pc::fork_scope scope;
    co_await scope.fork(a);
    co_await scope.call(b);
    co_await scope.join();
    sum += co_await std::move(a) + co_await std::move(b);
  }
  collect_toggle();  // off
  co_return sum;
}

pc::stack_task<std::int64_t> stack_leaf() {
  co_return one();
}

pc::stack_task<std::int64_t> frame_stack_forks(std::int64_t n) {
  std::int64_t sum = 0;
  collect_toggle();  // on
  for (std::int64_t i = 0; i < n; ++i) {
    pc::stack_task<std::int64_t> a = stack_leaf(), b = stack_leaf();
    pc::fork_scope scope;
    co_await scope.fork(a);
    co_await scope.call(b);
    co_await scope.join();
    sum += std::move(a).result() + std::move(b).result();
  }
  collect_toggle();  // off
  co_return sum;
}

}  // namespace

int main(int argc, char** argv) {
  return main_for(argc, argv,
                  {{"fork_join", {[](std::int64_t n) {
                      pc::thread_pool pool(1);
                      const std::int64_t sum = pc::sync_wait(pool, forks(n));
                      if (sum != 2 * n) wrong("fork_join summed " + std::to_string(sum));
                    }}},
                   {"fork_join_workfirst", {[](std::int64_t n) {
                      pc::thread_pool pool(1);
                      const std::int64_t sum = pc::sync_wait(pool, work_first_forks(n));
                      if (sum != 2 * n) wrong("fork_join_workfirst summed " + std::to_string(sum));
                    }}},
                   {"fork_join_framestack", {[](std::int64_t n) {
                      pc::thread_pool pool(1);
                      const std::int64_t sum = pc::sync_wait(pool, frame_stack_forks(n));
                      if (sum != 2 * n) wrong("fork_join_framestack summed " + std::to_string(sum));
                    }}},
                   {"post_run", {[](std::int64_t n) {
                      pc::thread_pool pool(1);
                      post_and_run(pool, n);
                    }}}});
}
