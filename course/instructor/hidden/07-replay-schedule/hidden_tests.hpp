// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 07's hidden workload (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on shows the students did not tune for; a student's
// own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The workload: bigger shows under pools::sim's random walk, 2,000 seeds: 4 to 6 seats and two
// buyers more than seats (two buyers turned away, not one), the buyer numbers drawn from the seed.
// A buy() that holds the seat count right only for the visible shows' one extra buyer fails here.
// Included by check.cpp after its helpers: it uses show_plan, opening and verify.
#pragma once

// GCC 12 flags the coroutine frame of hidden_show (its fields use check.cpp's types, which live in
// an anonymous namespace) with -Wsubobject-linkage because this file is a header, although it is
// included by that one translation unit only: the frame never crosses a translation unit.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
#endif

namespace {

show_plan hidden_plan(std::uint64_t n) {
  show_plan p;
  p.seats = 4 + static_cast<int>(n % 3);
  for (int b = 0; b < p.seats + 2; ++b) p.buyers.push_back(100 + static_cast<int>((n * 13 + 97 * b) % 889));
  return p;
}

template <class Pool>
pc::task<std::string> hidden_show(Pool& pool, std::uint64_t n) {
  const show_plan p = hidden_plan(n);
  exercise::box_office office(p.seats, p.buyers.size());
  co_await opening(pool, office, p);
  co_return co_await verify(pool, office, p);
}

void hidden_tests(course::report& report) {
  course::deadline limit("hidden: bigger shows over 2000 seeds", 60s, "a simulated run that never ends");
  report.test("hidden: pools::sim, bigger shows, two buyers turned away");
  pools::sim::explore_options o;
  o.runs = 2000;
  o.strategy = "random";
  o.program = COURSE_PROGRAM;
  o.trace_path = "exercise-07-hidden-seed.json";
  o.out = stdout;
  o.schedule_lines = 20;
  std::fflush(stdout);
  const auto r = pools::sim::explore(o, [](pools::sim::scheduler& s) {
    pc::simulated pool(s);
    if (std::string problem = pool.run(hidden_show(pool, s.seed())); !problem.empty())
      throw std::runtime_error(problem);
  });
  std::fflush(stdout);
  report.require(!r.failed, r.failed ? "bigger shows: seed " + std::to_string(r.seed) + " fails: " + r.error
                                     : "bigger shows: " + std::to_string(r.runs) +
                                           " seeds, no show oversold or underpaid");
}

}  // namespace
