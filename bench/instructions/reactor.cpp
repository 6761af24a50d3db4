// SPDX-License-Identifier: MIT
// instr_reactor — the tuned reactor's hot path for the instruction-count guard
// (bench/instructions.py; how counting stays deterministic: measure.hpp).
//   post_run   pool.post of an empty callable from a handler, and its run (measure.hpp), on one
//              io_context run by one thread (the per_thread strategy, the default)
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strategy.hpp>

#include <cstdint>

#include "measure.hpp"

namespace {
using namespace pools::bench::instructions;
}  // namespace

int main(int argc, char** argv) {
  return main_for(argc, argv, {{"post_run", {[](std::int64_t n) {
                                  pools::reactor::executor pool(1, pools::reactor::strategy::per_thread);
                                  post_and_run(pool, n);
                                }}}});
}
