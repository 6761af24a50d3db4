// SPDX-License-Identifier: MIT
// A bench subject that tests the harness itself. Its fib is wrong on purpose: bench_cli_test.py
// --expect-wrong proves that a wrong result ends the run with exit code 1 and a message, never a
// time. Its "wakeup" sleeps n times, and every sleep blocks the thread, which is a voluntary
// context switch: bench_cli_test.py --expect-switches proves the record counts at least n a
// repetition (and not the warm-up's, nor the whole process's).
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>

#include <chrono>
#include <thread>

int main(int argc, char** argv) {
  using namespace pools::bench;
  suite s("selftest");
  s.add("fib", [](const params& p) -> repetition {
    return [n = static_cast<int>(p.n)](rep_timer&, metrics&) { check_fib(n, fib_expected(n) + 1); };
  });
  s.add("wakeup", [](const params& p) -> repetition {
    return [n = p.n](rep_timer&, metrics&) {
      for (std::int64_t i = 0; i < n; ++i) std::this_thread::sleep_for(std::chrono::microseconds(200));
    };
  });
  s.unsupported("memory", "selftest has no executor");
  return s.main(argc, argv);
}
