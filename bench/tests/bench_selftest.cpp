// SPDX-License-Identifier: MIT
// A bench subject that gets fib wrong on purpose. Its test (bench_cli_test.py --expect-wrong)
// proves that a wrong result ends the run with exit code 1 and a message, never a time.
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>

int main(int argc, char** argv) {
  using namespace pools::bench;
  suite s("selftest");
  s.add("fib", [](const params& p) -> repetition {
    return [n = static_cast<int>(p.n)](rep_timer&, metrics&) { check_fib(n, fib_expected(n) + 1); };
  });
  s.unsupported("memory", "selftest has no executor");
  return s.main(argc, argv);
}
