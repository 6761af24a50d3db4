// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 01-first-pool (scripts/grade-exercise.sh 01-first-pool NAME).
// Not for editing: your code is variants/NAME/include/pools/NAME/pool.hpp.
//
// Built once per scaffolded pool (course/CMakeLists.txt: POOL_HEADER, POOL_TYPE), it scores the
// pool on the exercise's fixed rubric (rubric.json) through the result channel of
// course/check.hpp. The tests are the contract's rules a first pool gets wrong (every task runs
// exactly once, from any thread and from tasks; the destructor drains; an exception is reported
// and the pool goes on) and one the contract does not state: the tasks run on the pool's own
// threads, several at once (a "pool" that runs each task on the caller obeys every other rule).
// The conformance suite under ASan and TSan, the bench and the HTTP run are the report card's
// (scripts/grade.sh NAME), not this check's.
// Every step runs under a course::deadline: a hang fails the step with its name.
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <course/check.hpp>
#include <course/threads_rule.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include POOL_HEADER

namespace {

using namespace std::chrono_literals;
using student_pool = POOL_TYPE;

const std::string hang_why =
    "a hang: a lost wake-up (a task queued while every worker sleeps), a wait without a predicate, "
    "or a destructor that never lets its workers leave";

// Every slot must have been incremented exactly once; says which was not.
std::string exactly_once(const std::vector<std::atomic<std::uint8_t>>& runs) {
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (const int r = runs[i].load(); r != 1) {
      return "task " + std::to_string(i) + " of " + std::to_string(runs.size()) + " ran " +
             std::to_string(r) + " times";
    }
  }
  return "";
}

// The pool's post() may throw "not implemented yet" (the scaffold): each test says so and fails,
// instead of the whole check stopping at the first post.
template <class Step>
void guarded(course::report& report, const std::string& what, Step step) {
  try {
    step();
  } catch (const std::exception& e) {
    report.require(false, what + ": threw " + e.what());
  }
}

void exactly_once_tests(course::report& report) {
  report.test("every task runs exactly once: posts from outside, from 4 threads at once, on 1 and 4 threads");
  for (std::size_t threads : {1, 4}) {
    const std::string on = " (" + std::to_string(threads) + " thread(s))";
    guarded(report, "100,000 posts from outside" + on, [&] {
      course::deadline limit("100,000 posts from outside" + on, 60s, hang_why);
      std::vector<std::atomic<std::uint8_t>> runs(100'000);
      {
        student_pool pool(threads);
        for (auto& r : runs) pool.post([&r] { r.fetch_add(1, std::memory_order_relaxed); });
      }  // the destructor drains
      const std::string bad = exactly_once(runs);
      report.require(bad.empty(), "every task posted from outside ran exactly once" + on +
                                      (bad.empty() ? "" : ": " + bad));
    });
    guarded(report, "4 threads posting at once" + on, [&] {
      course::deadline limit("4 threads posting at once" + on, 60s, hang_why);
      constexpr std::size_t per_thread = 25'000;
      std::vector<std::atomic<std::uint8_t>> runs(4 * per_thread);
      std::atomic<bool> threw{false};
      {
        student_pool pool(threads);
        std::vector<std::thread> posters;
        for (std::size_t p = 0; p < 4; ++p) {
          posters.emplace_back([&, p] {
            try {
              for (std::size_t k = 0; k < per_thread; ++k) {
                pool.post(
                    [&runs, i = p * per_thread + k] { runs[i].fetch_add(1, std::memory_order_relaxed); });
              }
            } catch (...) {
              threw = true;
            }
          });
        }
        for (auto& t : posters) t.join();
      }
      const std::string bad = threw ? "post() threw" : exactly_once(runs);
      report.require(bad.empty(), "4 threads posting at once: every task ran exactly once" + on +
                                      (bad.empty() ? "" : ": " + bad));
    });
  }
}

void drain_tests(course::report& report) {
  report.test("the destructor drains, tasks posted by tasks included");
  for (std::size_t threads : {1, 2}) {
    const std::string on = " (" + std::to_string(threads) + " thread(s))";
    guarded(report, "a tree of tasks posted from tasks" + on, [&] {
      course::deadline limit("a tree of tasks posted from tasks" + on, 60s, hang_why);
      constexpr std::size_t leaves = 1 << 14;
      std::vector<std::atomic<std::uint8_t>> runs(2 * leaves);  // heap order: node i's children are 2i, 2i+1
      {
        student_pool pool(threads);
        struct node {
          static void visit(student_pool& p, std::vector<std::atomic<std::uint8_t>>& r, std::size_t i) {
            r[i].fetch_add(1, std::memory_order_relaxed);
            if (i >= leaves) return;
            p.post([&p, &r, i] { visit(p, r, 2 * i); });
            p.post([&p, &r, i] { visit(p, r, 2 * i + 1); });
          }
        };
        runs[0].store(1);  // slot 0 is unused in heap order
        pool.post([&pool, &runs] { node::visit(pool, runs, 1); });
      }  // the destructor must also wait for the tasks the tasks post
      const std::string bad = exactly_once(runs);
      report.require(bad.empty(), "every task of a tree posted from tasks ran, drained by the destructor" +
                                      on + (bad.empty() ? "" : ": " + bad));
    });
  }
}

std::atomic<int> reported{0};
void count_report(std::exception_ptr) noexcept {
  reported.fetch_add(1);
}

void exception_tests(course::report& report) {
  report.test("an exception in a task is reported, and the pool goes on");
  const auto previous = pools::set_unhandled_exception_handler(&count_report);
  guarded(report, "tasks that throw", [&] {
    course::deadline limit("tasks that throw", 30s, hang_why);
    reported = 0;
    std::atomic<int> after{0};
    {
      student_pool pool(2);
      for (int i = 0; i < 10; ++i) pool.post([] { throw std::runtime_error("a task's exception"); });
      for (int i = 0; i < 100; ++i) pool.post([&after] { after.fetch_add(1); });
    }
    report.require(reported.load() == 10, "each of 10 exceptions reached pools' report handler (" +
                                              std::to_string(reported.load()) +
                                              " did): run tasks through pools::invoke_reporting");
    report.require(after.load() == 100,
                   "the 100 tasks posted after them ran (" + std::to_string(after.load()) + " did)");
  });
  pools::set_unhandled_exception_handler(previous);
}

void threads_tests(course::report& report) {
  report.test("tasks run on the pool's own threads, concurrently");
  guarded(report, "two tasks on a 2-thread pool", [&] { course::require_own_threads<student_pool>(report); });
}

}  // namespace

// The hidden tests (the speed tests against the reference pool, and a workload of their own):
// only in the instructor's graders, which build the check with course/instructor/hidden/01-first-pool/
// on the include path; the hand-out has no such folder, and a student's run says the tests exist
// and what they are worth (their rubric.json entries).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main() {
  course::report report("01-first-pool");
  exactly_once_tests(report);
  drain_tests(report);
  exception_tests(report);
  threads_tests(report);
#ifdef COURSE_HIDDEN_TESTS
  hidden_tests(report);
#endif
  return report.finish();
}
