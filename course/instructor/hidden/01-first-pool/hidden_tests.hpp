// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 01's hidden tests (INSTRUCTOR ONLY: course/instructor/ is left out of
// the hand-out). The graders build the check with this folder on the include path
// (course/CMakeLists.txt), so a class is graded on workloads the students did not tune for; a
// student's own run says the tests exist and what they are worth (rubric.json, "hidden": true).
//
//  - wake-ups: one task at a time, each posted while every worker sleeps (a lost wake-up hangs);
//  - speed, against the reference pool (the reference solution, built from the instructor's copy:
//    COURSE_REFERENCE_HEADER, course/CMakeLists.txt) measured in the same run, interleaved
//    (course/speed.hpp): fork-join (fib(22) in continuation style, every call a posted task) and
//    submission (100,000 empty tasks posted from outside, then the drain), each on 2 threads, each
//    run with a pool of its own (no pool is alive while the other side is timed).
//    Full points within 1.2x the reference's median, none from 2.0x, linear between. Speed is
//    graded for a pool that runs its tasks on its own threads (an inline "pool" is fast and wrong).
// Included by check.cpp after its helpers: it uses student_pool, guarded and hang_why.
#pragma once

#include <course/speed.hpp>
#include <functional>

#ifdef COURSE_REFERENCE_HEADER
#include COURSE_REFERENCE_HEADER  // pools::reference::pool
#endif

namespace {

void hidden_wakeups(course::report& report) {
  report.test("hidden: one task at a time to sleeping workers, on 4 threads");
  guarded(report, "one task at a time", [&] {
    course::deadline limit("one task at a time to sleeping workers", 60s, hang_why);
    std::mutex m;
    std::condition_variable cv;
    int done = 0;
    constexpr int rounds = 2000;
    {
      student_pool pool(4);
      for (int i = 0; i < rounds; ++i) {
        pool.post([&] {
          {
            std::lock_guard lock(m);
            ++done;
          }
          cv.notify_one();
        });
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return done == i + 1; });  // every worker goes back to sleep meanwhile
      }
    }
    report.require(done == rounds, "2,000 tasks, each posted once the one before had run: all ran (" +
                                       std::to_string(done) + ")");
  });
}

// fib(n) with one task per call, in continuation style: the child that finishes last adds the
// results and continues its parent. `inline_runs` counts tasks run on the thread that started it.
template <class Pool>
void fib(Pool& pool, int n, std::thread::id caller, std::atomic<int>& inline_runs,
         std::function<void(long)> done) {
  if (n < 2) {
    done(n);
    return;
  }
  struct join {
    std::atomic<int> pending{2};
    long results[2] = {0, 0};
    std::function<void(long)> done;
  };
  auto shared = std::make_shared<join>();
  shared->done = std::move(done);
  for (int i = 0; i < 2; ++i) {
    pool.post([&pool, &inline_runs, caller, n, i, shared] {
      if (std::this_thread::get_id() == caller) inline_runs.fetch_add(1, std::memory_order_relaxed);
      fib(pool, n - 1 - i, caller, inline_runs, [i, shared](long value) {
        shared->results[i] = value;
        if (shared->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          shared->done(shared->results[0] + shared->results[1]);
        }
      });
    });
  }
}

template <class Pool>
long run_fib(Pool& pool, int n, std::atomic<int>& inline_runs) {
  std::mutex m;
  std::condition_variable cv;
  bool ready = false;
  long answer = -1;
  fib(pool, n, std::this_thread::get_id(), inline_runs, [&](long v) {
    std::lock_guard lock(m);
    answer = v;
    ready = true;
    cv.notify_one();
  });
  std::unique_lock lock(m);
  cv.wait(lock, [&] { return ready; });
  return answer;
}

template <class Pool>
void submit_burst(std::atomic<int>& inline_runs) {
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> ran{0};
  {
    Pool pool(2);
    for (int i = 0; i < 100'000; ++i) {
      pool.post([&ran, &inline_runs, caller] {
        if (std::this_thread::get_id() == caller) inline_runs.fetch_add(1, std::memory_order_relaxed);
        ran.fetch_add(1, std::memory_order_relaxed);
      });
    }
  }  // the destructor drains: the time includes every task run
  if (ran.load() != 100'000) throw std::runtime_error("the submission workload lost tasks");
}

const course::speed_rule speed{1.2, 2.0, 7, 7};

void hidden_speed(course::report& report) {
#ifndef COURSE_REFERENCE_HEADER
  report.test("hidden: fork-join speed against the reference pool, on 2 threads");
  report.require(false,
                 "the grader has no reference pool (COURSE_REFERENCE_HEADER): an instructor's setup error");
  report.test("hidden: submission speed against the reference pool, on 2 threads");
  report.require(false,
                 "the grader has no reference pool (COURSE_REFERENCE_HEADER): an instructor's setup error");
#else
  using reference_pool = pools::reference::pool;
  report.test("hidden: fork-join speed against the reference pool, on 2 threads");
  guarded(report, "fork-join speed", [&] {
    course::deadline limit("fork-join speed: fib(22) on 2 threads", 120s, hang_why);
    std::atomic<int> inline_runs{0}, ignored{0};
    long got = 0;
    // Each run makes its own pool: no pool of one side is alive while the other side is timed (a
    // pool whose idle workers spin would otherwise slow the reference down).
    const course::speed_result r = course::compare_speed(
        speed,
        [&] {
          reference_pool reference(2);
          run_fib(reference, 22, ignored);
        },
        [&] {
          student_pool yours(2);
          got = run_fib(yours, 22, inline_runs);
        });
    report.require(got == 17711, "fib(22) on your pool is " + std::to_string(got) + " (17711 expected)");
    report.require(inline_runs.load() == 0, "speed is graded for tasks run on the pool's own threads: " +
                                                std::to_string(inline_runs.load()) +
                                                " ran on the posting thread");
    report.partial(r.fraction, r.describe("fork-join, fib(22) in continuation style on 2 threads", speed));
  });
  report.test("hidden: submission speed against the reference pool, on 2 threads");
  guarded(report, "submission speed", [&] {
    course::deadline limit("submission speed: 100,000 posts on 2 threads", 120s, hang_why);
    std::atomic<int> inline_runs{0}, ignored{0};
    const course::speed_result r = course::compare_speed(
        speed, [&] { submit_burst<reference_pool>(ignored); },
        [&] { submit_burst<student_pool>(inline_runs); });
    report.require(inline_runs.load() == 0, "speed is graded for tasks run on the pool's own threads: " +
                                                std::to_string(inline_runs.load()) +
                                                " ran on the posting thread");
    report.partial(
        r.fraction,
        r.describe("submission, 100,000 empty tasks posted from outside, then the drain, on 2 threads",
                   speed));
  });
#endif
}

void hidden_tests(course::report& report) {
  hidden_wakeups(report);
  hidden_speed(report);
}

}  // namespace
