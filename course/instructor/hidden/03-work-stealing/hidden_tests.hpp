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
//
// And the speed tests: your pool against the reference pool (the reference solution, built from the
// instructor's copy: COURSE_REFERENCE_HEADER, cmake/course.cmake; its class renamed here so that
// both are in one program) measured in the same run, interleaved (course/speed.hpp): fork-join
// (fib(24) in continuation style, every call a posted task) and submission (100,000 empty tasks
// posted from outside, then the drain), each on 2 threads, each run with a pool of its own (no pool
// is alive while the other side is timed). Full points within 1.2x the reference's
// median, none from 2.0x, linear between. Speed is graded for a pool that steals (the visible
// stealing test saw pushes and steals): a shared queue's speed is not this exercise's.
// Included by check.cpp after its helpers: it uses stealing_pool, exactly_once, deques_saw, hang_why,
// run_fib and stealing_seen.
#pragma once

#include <course/speed.hpp>
#include <stdexcept>

#ifdef COURSE_REFERENCE_HEADER
#define stealing_pool reference_stealing_pool
#include COURSE_REFERENCE_HEADER  // exercise::reference_stealing_pool
#undef stealing_pool
#endif

namespace {

void hidden_fan_out(course::report& report) {
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

const course::speed_rule speed{1.2, 2.0, 7, 7};

template <class Pool>
void submit_burst() {
  std::atomic<int> ran{0};
  {
    Pool pool(2);
    for (int i = 0; i < 100'000; ++i) pool.post([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
  }  // the destructor drains: the time includes every task run
  if (ran.load() != 100'000) throw std::runtime_error("the submission workload lost tasks");
}

void hidden_speed(course::report& report) {
  const std::string no_reference =
      "the grader has no reference pool (COURSE_REFERENCE_HEADER): an instructor's setup error";
  const std::string steals_first =
      "speed is graded for a pool that steals: the stealing test above saw its pushes and steals";
  report.test("hidden: fork-join speed against the reference pool, on 2 threads");
#ifndef COURSE_REFERENCE_HEADER
  report.require(false, no_reference);
  report.test("hidden: submission speed against the reference pool, on 2 threads");
  report.require(false, no_reference);
#else
  using reference_pool = exercise::reference_stealing_pool;
  if (report.require(stealing_seen, steals_first)) {
    course::deadline limit("fork-join speed: fib(24) on 2 threads", 120s, hang_why);
    std::atomic<std::uint64_t> posts{0};
    long got = 0;
    // Each run makes its own pool: no pool of one side is alive while the other side is timed (a
    // pool whose idle workers spin would otherwise slow the reference down).
    const course::speed_result r = course::compare_speed(
        speed,
        [&] {
          reference_pool reference(2);
          run_fib(reference, 24, posts);
        },
        [&] {
          stealing_pool yours(2);
          got = run_fib(yours, 24, posts);
        });
    report.require(got == fib_reference(24), "fib(24) on your pool is " + std::to_string(got));
    report.partial(r.fraction, r.describe("fork-join, fib(24) in continuation style on 2 threads", speed));
  }
  report.test("hidden: submission speed against the reference pool, on 2 threads");
  if (report.require(stealing_seen, steals_first)) {
    course::deadline limit("submission speed: 100,000 posts on 2 threads", 120s, hang_why);
    try {
      const course::speed_result r = course::compare_speed(
          speed, [] { submit_burst<reference_pool>(); }, [] { submit_burst<stealing_pool>(); });
      report.partial(r.fraction,
                     r.describe("submission, 100,000 empty tasks posted from outside, then the drain, "
                                "on 2 threads",
                                speed));
    } catch (const std::exception& e) {
      report.require(false, e.what());
    }
  }
#endif
}

void hidden_tests(course::report& report) {
  hidden_fan_out(report);
  hidden_speed(report);
}

}  // namespace
