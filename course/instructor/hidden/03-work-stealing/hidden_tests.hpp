// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 03's hidden workload (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on a workload the students did not tune for; a
// student's own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The workload: a wide fan-out instead of fib's binary tree. One task posts 20,000 small tasks
// onto its own deque on a 3-thread pool; every task must run exactly once, and the two other
// workers must steal from that one deque (a pool that steals only in fib's shape, or whose
// idle workers sleep while one deque holds all the work, fails).
// Included by check.cpp after its helpers: it uses stealing_pool, exactly_once, deques_saw, hang_why.
#pragma once

namespace {

void hidden_tests(course::report& report) {
  report.test("hidden: a wide fan-out from one task on 3 threads");
  course::deadline limit("the hidden fan-out", 60s, hang_why);
  constexpr std::size_t tasks = 20'000;
  // A few runs are allowed, as in the visible stealing test: on a busy machine one run may end
  // before a sleeping worker is scheduled at all. Every run must run every task exactly once.
  const seen before = deques_saw();
  std::string bad;
  for (int attempt = 0; attempt < 5 && bad.empty() && deques_saw().steals == before.steals; ++attempt) {
    std::vector<std::atomic<std::uint8_t>> runs(tasks);
    {
      stealing_pool pool(3);
      pool.post([&pool, &runs] {
        for (std::size_t i = 0; i < tasks; ++i) {
          pool.post([&runs, i] {
            runs[i].fetch_add(1, std::memory_order_relaxed);
            // Some work per task, so that the other workers have time to steal.
            volatile unsigned spin = 0;
            for (int k = 0; k < 2000; ++k) spin = spin + 1;
          });
        }
      });
    }  // the destructor drains
    bad = exactly_once(runs);
  }
  const std::uint64_t stolen = deques_saw().steals - before.steals;
  report.require(bad.empty(),
                 "hidden fan-out: every one of the tasks ran exactly once" + (bad.empty() ? "" : ": " + bad));
  report.require(stolen > 0, "hidden fan-out: other workers stole from the posting worker's deque (" +
                                 std::to_string(stolen) + " steals)");
}

}  // namespace
