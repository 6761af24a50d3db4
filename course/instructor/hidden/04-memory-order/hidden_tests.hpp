// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 04's hidden scenario (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on a scenario the students did not tune their orders
// for; a student's own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The scenario: the owner grows the deque twice (capacity 2, six pushes) while two thieves steal
// throughout, and pops between the pushes: a thief may read from the old array while the owner
// copies into the new one, and the owner's pops race the thieves for the last elements each time.
// Included by check.cpp after its helpers: it uses deque_t, taken_log, check_exactly_once and scenario.
#pragma once

namespace {

struct hidden_growth_test : rl::test_suite<hidden_growth_test, 3> {
  deque_t* dq = nullptr;
  taken_log logs[3]{};
  static constexpr int pushed = 6;

  void before() {
    dq = new deque_t(2);
    for (auto& l : logs) l.count = 0;
  }

  void thread(unsigned index) {
    int v = 0;
    if (index == 0) {
      dq->push(1);
      dq->push(2);
      dq->push(3);  // grows to 4
      if (dq->pop(v)) logs[0].add(v);
      dq->push(4);
      dq->push(5);
      dq->push(6);  // grows to 8
      if (dq->pop(v)) logs[0].add(v);
    } else {
      for (int attempt = 0; attempt < 2; ++attempt) {
        const auto r = dq->steal();
        if (r.status == steal_status::success) logs[index].add(r.value);
      }
    }
  }

  void after() {
    int v = 0;
    while (dq->pop(v)) logs[0].add(v);
    if (logs[1].count + logs[2].count > 0) ++schedules_with_a_steal;
    check_exactly_once(logs, 3, pushed);
    delete dq;
  }
};

void hidden_tests(course::report& report, rl::iteration_t iterations) {
  scenario<hidden_growth_test>(report, "hidden: two growths while two thieves steal", iterations / 2);
}

}  // namespace
