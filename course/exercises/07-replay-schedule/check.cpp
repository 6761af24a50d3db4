// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 07-replay-schedule (scripts/grade-exercise.sh
// 07-replay-schedule). Not for editing: your code is box_office.hpp.
//
// One program: a show, its buyers run with when_all. After it: no more seats sold than the show
// has, every seat sold (there is one buyer more than seats), one payment per seat sold. The show
// comes from the seed (the run's number on the real pool): 2 seats and 3 buyers, then 1 and 2, then
// 3 and 4, and so on; buyers carry numbers drawn from it too, so that a buy() which lets "the first
// two buyers" in by their number sells the wrong seats. (Seed 1, the one a student reads first, is
// 2 seats and 3 buyers.) The check counts the payments itself, from the desk's channel. Three parts:
//  1. the real pool: 1,000 runs on a pools::coroutines::thread_pool of 2 threads (what a test
//     suite would do; the starting point passes almost all of them), graded in the tsan build:
//     ThreadSanitizer stops the program at a data race on the office;
//  2. pools::sim, random walk: 5,000 seeds; the first failing seed stops the part and prints its
//     schedule, the replay line and the trace file;
//  3. pools::sim, PCT with depth 2: 5,000 seeds.
// On the simulator a step ends before every co_await on a primitive, a free lock's too
// (pools/sim/scheduler.hpp, SCHEDULING POINTS): a fix that checks and takes in two critical
// sections, however close, leaves a point between them where a seed runs another buyer. A take
// with no co_await between it and a check outside the lock is one step on the simulator (a
// coroutine is switched only at a co_await); on the real pool it is a data race, part 1's to find.
// With POOLS_SIM_SEED=N (and POOLS_SIM_STRATEGY) set, parts 2 and 3 run that one seed: the replay.
#include <pools/coroutines/simulated.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/sim/explore.hpp>

#include <array>
#include <box_office.hpp>  // <>, not "": quotes would find the start's copy next to this file first
#include <chrono>
#include <course/check.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace pc = pools::coroutines;

/// One show: how many seats, and the numbers its buyers carry (one buyer more than seats).
struct show_plan {
  int seats = 0;
  std::vector<int> buyers;
};

/// The show of seed (or run) `n`, n >= 1: seats 2, 1, 3, 2, 1, 3, ...; buyer numbers distinct,
/// from 100 to 988, shifted by n (none of them is a small index such as 0 or 1).
show_plan plan(std::uint64_t n) {
  show_plan p;
  p.seats = std::array{2, 1, 3}[(n - 1) % 3];
  p.buyers.reserve(static_cast<std::size_t>(p.seats) + 1);
  for (int b = 0; b <= p.seats; ++b) p.buyers.push_back(100 + static_cast<int>((n * 7 + 211 * b) % 889));
  return p;
}

template <class Pool>
pc::task<void> opening(Pool& pool, exercise::box_office& office, const show_plan& p) {
  std::vector<pc::task<void>> all;
  all.reserve(p.buyers.size());
  for (const int buyer : p.buyers) all.push_back(exercise::buy(pool, office, buyer));
  co_await pc::when_all(std::move(all));
  office.payments.close();
}

// "" when the show ended right; otherwise what went wrong.
template <class Pool>
pc::task<std::string> verify(Pool& /*pool*/, exercise::box_office& office, const show_plan& p) {
  int paid = 0;
  while (co_await office.payments.receive()) ++paid;
  if (office.sold > p.seats)
    co_return std::to_string(office.sold) + " seats sold, the show has " + std::to_string(p.seats);
  if (office.sold < p.seats)
    co_return "only " + std::to_string(office.sold) + " of " + std::to_string(p.seats) + " seats sold to " +
        std::to_string(p.buyers.size()) + " buyers";
  if (paid != office.sold)
    co_return std::to_string(paid) + " payments for " + std::to_string(office.sold) + " seats sold";
  co_return "";
}

template <class Pool>
pc::task<std::string> show(Pool& pool, std::uint64_t n) {
  const show_plan p = plan(n);
  exercise::box_office office(p.seats, p.buyers.size());
  co_await opening(pool, office, p);
  co_return co_await verify(pool, office, p);
}

void explore_part(course::report& report, const char* label, const char* strategy) {
  report.test(std::string("pools::sim, ") + strategy);
  pools::sim::explore_options o;
  o.runs = 5000;
  o.strategy = strategy;
  o.program = COURSE_PROGRAM;  // cmake/course.cmake: build-tsan/course/exercises/07-.../exercise_07-...
  o.trace_path = "exercise-07-seed.json";
  o.out = stdout;
  o.schedule_lines = 0;  // the whole schedule: it is short
  std::fflush(stdout);
  const auto r = pools::sim::explore(o, [](pools::sim::scheduler& s) {
    pc::simulated pool(s);
    if (std::string problem = pool.run(show(pool, s.seed())); !problem.empty())
      throw std::runtime_error(problem);
  });
  std::fflush(stdout);
  report.require(!r.failed, r.failed ? std::string(label) + ": seed " + std::to_string(r.seed) +
                                           " fails: " + r.error + " (replay: " + r.replay + ")"
                                     : std::string(label) + ": " + std::to_string(r.runs) +
                                           " seeds, no show oversold or underpaid");
}

}  // namespace

// The hidden workload: only in the instructor's graders, which build the check with
// course/instructor/hidden/07-replay-schedule/ on the include path; the hand-out has no such folder,
// and a student's run says the test exists and what it is worth (its rubric.json entry).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main() {
  course::report report("07-replay-schedule");

  std::printf("-- the real pool: 1000 shows on a thread_pool of 2 threads\n");
  {
    course::deadline limit("1000 shows on the real pool", 60s,
                           "a buyer that waits for something nobody does (a lock never unlocked?)");
    report.test("real pool: 1000 shows");
    pc::thread_pool pool(2);
    int failed = 0;
    std::string first;
    for (std::uint64_t run = 0; run < 1000; ++run) {
      if (std::string problem = pc::sync_wait(pool, show(pool, run + 1)); !problem.empty()) {
        if (failed++ == 0) first = problem;
      }
    }
    report.require(failed == 0, "real pool: " + std::to_string(failed) + " of 1000 shows went wrong" +
                                    (failed != 0 ? " (the first: " + first + ")" : ""));
  }

  std::printf("-- pools::sim, random walk\n");
  {
    course::deadline limit("random walk over 5000 seeds", 60s, "a simulated run that never ends");
    explore_part(report, "random walk", "random");
  }
  std::printf("-- pools::sim, PCT (depth 2)\n");
  {
    course::deadline limit("PCT over 5000 seeds", 60s, "a simulated run that never ends");
    explore_part(report, "pct:2", "pct:2:60");
  }
#ifdef COURSE_HIDDEN_TESTS
  std::printf("-- hidden\n");
  hidden_tests(report);
#endif
  return report.finish();
}
