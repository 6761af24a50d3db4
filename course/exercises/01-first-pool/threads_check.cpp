// SPDX-License-Identifier: MIT
// threads_check.cpp — a rule of exercise 01's report card that the conformance suite does not
// state: a pool runs its tasks on threads of its own, several at once (course/threads_rule.hpp,
// which 01's graded check runs too). Built per scaffolded pool by course/CMakeLists.txt
// (POOL_HEADER, POOL_TYPE), run by course/tools/grade.py as one more rule.
#include <course/check.hpp>
#include <course/threads_rule.hpp>

#include POOL_HEADER

int main() {
  course::report report("01-first-pool");
  report.test("tasks run on the pool's own threads, concurrently");
  course::require_own_threads<POOL_TYPE>(report);
  return report.finish();
}
