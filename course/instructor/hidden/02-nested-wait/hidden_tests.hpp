// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 02's hidden workload (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on a workload the students did not tune for; a
// student's own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The workload: several roots at once, on a thread count the visible test does not use. Four
// fib_helping(16) roots are posted together to a 3-thread pool (more waiting roots than workers:
// a worker that waits must run the others' children too), then four fib_continuation(18) calls
// share one 3-thread pool, each done called once with its own answer.
// Included by check.cpp after its helpers: it uses run, fib_reference, blocking_pool and outcome.
#pragma once

namespace {

constexpr int roots = 4;

void hidden_tests(course::report& report) {
  report.test("hidden: several roots at once on 3 threads, both fixes");
  {
    const outcome o = run(3, [](blocking_pool& pool, std::shared_ptr<std::promise<long>> answer) {
      auto left = std::make_shared<std::atomic<int>>(roots);
      auto sum = std::make_shared<std::atomic<long>>(0);
      for (int r = 0; r < roots; ++r) {
        pool.post([&pool, answer, left, sum] {
          sum->fetch_add(exercise::fib_helping(pool, 16));
          if (left->fetch_sub(1) == 1) answer->set_value(sum->load());
        });
      }
    });
    const long expected = roots * fib_reference(16);
    report.require(o.answered && o.value == expected,
                   "four fib_helping(16) roots at once on 3 threads: " +
                       (o.answered ? "their sum is " + std::to_string(o.value) + " (" +
                                         std::to_string(expected) + " expected)"
                                   : o.why));
  }
  {
    auto calls = std::make_shared<std::atomic<int>>(0);
    const outcome o = run(3, [calls](blocking_pool& pool, std::shared_ptr<std::promise<long>> answer) {
      auto left = std::make_shared<std::atomic<int>>(roots);
      auto sum = std::make_shared<std::atomic<long>>(0);
      for (int r = 0; r < roots; ++r) {
        exercise::fib_continuation(pool, 18 - r, [answer, left, sum, calls](long v) {
          calls->fetch_add(1);
          sum->fetch_add(v);
          if (left->fetch_sub(1) == 1) answer->set_value(sum->load());
        });
      }
    });
    const long expected = fib_reference(18) + fib_reference(17) + fib_reference(16) + fib_reference(15);
    report.require(o.answered && o.value == expected && calls->load() == roots && o.helped == 0,
                   "fib_continuation(18), (17), (16) and (15) at once on 3 threads: " +
                       (!o.answered ? o.why
                                    : "the sum of their answers is " + std::to_string(o.value) + " (" +
                                          std::to_string(expected) + " expected), done called " +
                                          std::to_string(calls->load()) + " times (4 expected), " +
                                          std::to_string(o.helped) + " helping waits (0 expected)"));
  }
}

}  // namespace
