// SPDX-License-Identifier: MIT
// course/check.hpp — what the exercises' check programs share: a report a student can read, a
// result channel the grader reads, and a watchdog so that a check never hangs.
//
//   course::report report("02-nested-wait");
//   report.test("fix 1: fib_helping");  // a test of the exercise's rubric.json, by its fixed name
//   report.require(answer == 6765, "fib_helping(20) returned " + std::to_string(answer) + ", expected 6765");
//   return report.finish();  // prints PASS or FAIL with every reason; the exit status says which
//
// A test passes when every requirement checked under it is met (and at least one was checked).
// A measured test (a speed test: full points within a stated factor of a reference, fewer beyond)
// also calls report.partial(fraction, what): it scores that fraction of its points, and passes
// only at 1.
// The printed lines are for the student to read; the score does not come from them. The student's
// code runs in this process and could print anything, so the grader (course/tools/grade_run.py) passes
// a pipe's write end and a random nonce in COURSE_RESULT_FD and COURSE_RESULT_NONCE; the report
// reads both once, removes them from the environment before any of the student's code is called,
// and writes one JSON line per finished test to that pipe, each with the nonce. The grader scores
// only those lines, checks every test name against the rubric and the exit status against the
// verdict. What keeps the student's code off the pipe is the static check run before the build
// (course/tools/grade_static.py: no I/O, no exit, no environment, no inline assembly, no namespace
// course in a submission).
//
// A student's pool can hang (a lost wake-up, a drain that never ends, a deadlock); a test that
// hangs teaches nothing and blocks CI. So a check runs each step under a course::deadline: if the
// step is not over in time, the watchdog thread prints what was being checked and why it can hang,
// reports the test as failed, and ends the process (std::_Exit: a hung pool cannot be destroyed,
// its threads are stuck).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace course {

class report;
// The watchdog's way to record the test that hung. Set and cleared by the report on the main thread
// only: before a deadline starts its watchdog and after the last one is joined (a thread's start
// and its join order those writes with the watchdog's read; a sanitizer's callback runs later still).
inline report* active_report = nullptr;

/// Collects the requirements a check found met or not met, and prints them.
class report {
 public:
  explicit report(std::string exercise) : exercise_(std::move(exercise)) {
    // Every line out at once (unitbuf: a flush after each output): the student's code runs
    // between two lines and can crash, and a line still in the buffer would be lost with it.
    std::cout << std::unitbuf;
    std::cout << "== exercise " << exercise_ << '\n';
    if (const char* fd = std::getenv("COURSE_RESULT_FD")) result_fd_ = std::atoi(fd);
    if (const char* nonce = std::getenv("COURSE_RESULT_NONCE")) nonce_ = nonce;
    ::unsetenv("COURSE_RESULT_FD");
    ::unsetenv("COURSE_RESULT_NONCE");
    active_report = this;
  }

  report(const report&) = delete;
  report& operator=(const report&) = delete;
  ~report() { active_report = nullptr; }

  /// Starts the rubric's test `name` (course/exercises/<id>/rubric.json); ends the one before.
  void test(const std::string& name) {
    std::lock_guard lock(mutex_);
    end_test();
    test_ = name;
    test_open_ = true;
    std::cout << "-- test: " << name << '\n';
  }

  /// One requirement of the current test: prints "ok" or "FAIL" and the text; remembers a failure.
  bool require(bool met, const std::string& what) {
    std::lock_guard lock(mutex_);
    std::cout << (met ? "  ok    " : "  FAIL  ") << what << '\n';
    if (!met) failures_.push_back(what);
    ++checked_;
    test_passed_ = test_passed_ && met;
    test_output_ += (met ? "ok    " : "FAIL  ") + what + "\n";
    return met;
  }

  /// A measured part of the current test: it scores `fraction` (clamped to 0..1) of its points,
  /// the smallest fraction given when there are several; "ok" at 1, "PART" below it.
  void partial(double fraction, const std::string& what) {
    std::lock_guard lock(mutex_);
    fraction = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    const char* tag = fraction >= 1 ? "ok    " : "PART  ";
    std::cout << "  " << tag << what << '\n';
    fraction_ = fraction < fraction_ ? fraction : fraction_;
    ++checked_;
    test_output_ += std::string(tag) + what + "\n";
  }

  /// A line that is information, not a requirement (timings, explanations).
  void note(const std::string& what) { std::cout << "  note  " << what << '\n'; }

  /// Ends (reports) the current test before work that is not graded: a watchdog that fires in
  /// that work then has no test to abandon, and the graded tests keep their results.
  void end_graded() {
    std::lock_guard lock(mutex_);
    end_test();
  }

  bool failed() const {
    std::lock_guard lock(mutex_);
    return !failures_.empty();
  }

  /// Ends the current test as failed with `why`, for a caller that then ends the process: the
  /// watchdog (a step hung), from its own thread while the main thread may be inside require()
  /// or a send(), or a sanitizer's last callback, on whichever thread failed. So it takes the lock,
  /// and keeps it: nothing reported afterwards reaches the grader, and no line is interleaved.
  void abandon(const std::string& why) {
    // Bounded: the main thread holds the lock only inside these functions, never while the
    // submission runs. Should it not come free, the process ends without this line (the test
    // is then reported as unfinished, which scores it 0 as well).
    // (try_lock in a loop, not a timed mutex: ThreadSanitizer does not see a timed lock's acquire.)
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!mutex_.try_lock()) {
      if (std::chrono::steady_clock::now() > give_up) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!test_open_) return;
    test_passed_ = false;
    test_output_ += "FAIL  " + why + "\n";
    ++checked_;
    end_test();
  }

  /// Prints the verdict; the exit status for main: 0 on PASS, 1 on FAIL.
  int finish() {
    std::lock_guard lock(mutex_);
    end_test();
    send("{\"nonce\":\"" + escaped(nonce_) + "\",\"finish\":\"" + (failures_.empty() ? "PASS" : "FAIL") +
         "\"}");
    if (failures_.empty()) {
      std::cout << "PASS: exercise " << exercise_ << '\n';
      return 0;
    }
    std::cout << "FAIL: exercise " << exercise_ << " (" << failures_.size() << " requirement"
              << (failures_.size() == 1 ? "" : "s") << " not met):" << '\n';
    for (const auto& f : failures_) std::cout << "  - " << f << '\n';
    return 1;
  }

 private:
  // With mutex_ held (every caller above takes it).
  void end_test() {
    if (!test_open_) return;
    test_open_ = false;
    const bool met = test_passed_ && checked_ > 0;
    const bool passed = met && fraction_ >= 1;
    if (checked_ == 0) test_output_ += "FAIL  nothing of this test was checked (an earlier step failed)\n";
    // Integer thousandths: the number goes out without locale or float formatting.
    const long thousandths = met ? std::lround(fraction_ * 1000) : 0;
    send("{\"nonce\":\"" + escaped(nonce_) + "\",\"test\":\"" + escaped(test_) +
         "\",\"passed\":" + (passed ? "true" : "false") + ",\"thousandths\":" + std::to_string(thousandths) +
         ",\"output\":\"" + escaped(test_output_) + "\"}");
    test_passed_ = true;
    fraction_ = 1;
    checked_ = 0;
    test_output_.clear();
  }

  // One line to the grader's pipe, whole (a pipe write of up to PIPE_BUF bytes is atomic; a longer
  // one is written in a loop, and the lock its callers hold keeps any other line out of it).
  void send(std::string line) const {
    if (result_fd_ < 0) return;
    line += '\n';
    for (std::size_t at = 0; at < line.size();) {
      const ssize_t n = ::write(result_fd_, line.data() + at, line.size() - at);
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  }

  static std::string escaped(const std::string& s) {
    std::string out;
    for (const char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out += ' ';
      } else {
        out += c;
      }
    }
    return out;
  }

  // The report's state is written by the main thread and, once, by abandon() on another: the
  // lock orders them.
  mutable std::mutex mutex_;
  std::string exercise_;
  std::vector<std::string> failures_;
  int result_fd_ = -1;
  std::string nonce_;
  std::string test_;
  bool test_open_ = false;
  bool test_passed_ = true;
  double fraction_ = 1;  // partial(): the share of the current test's points it earned
  int checked_ = 0;
  std::string test_output_;
};

/// While alive, a watchdog thread ends the process with exit status 1 if the scope is not left
/// within `limit`, printing `step` and `why` (what can hang there). Leave the scope to disarm it.
class deadline {
 public:
  deadline(std::string step, std::chrono::seconds limit, std::string why)
      : step_(std::move(step)), why_(std::move(why)), watchdog_([this, limit] { watch(limit); }) {}

  ~deadline() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    watchdog_.join();
  }

  deadline(const deadline&) = delete;
  deadline& operator=(const deadline&) = delete;

 private:
  void watch(std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
    std::cout << "  FAIL  " << step_ << ": not finished after " << limit.count() << " s — " << why_ << '\n';
    std::cout << "FAIL: the check gave up (a hang); fix this step first" << '\n';
    if (active_report != nullptr) {
      active_report->abandon(step_ + ": not finished after " + std::to_string(limit.count()) + " s");
    }
    std::fflush(nullptr);
    // Not exit(): static destructors could wait for the hung threads. The status is a failure.
    std::_Exit(1);
  }

  std::string step_;
  std::string why_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread watchdog_;  // last: starts once the members it reads exist
};

}  // namespace course
