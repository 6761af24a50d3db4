// SPDX-License-Identifier: MIT
// course/check.hpp — what the exercises' check programs share: a report a student can read, and a
// watchdog so that a check never hangs.
//
//   course::report report("02-nested-wait");
//   report.require(answer == 6765, "fib_helping(20) returned " + std::to_string(answer) + ", expected 6765");
//   return report.finish();  // prints PASS or FAIL with every reason; the exit status says which
//
// A student's pool can hang (a lost wake-up, a drain that never ends, a deadlock); a test that
// hangs teaches nothing and blocks CI. So a check runs each step under a course::deadline: if the
// step is not over in time, the watchdog thread prints what was being checked and why it can hang,
// and ends the process at once (std::_Exit: a hung pool cannot be destroyed, its threads are stuck).
#pragma once

#include <chrono>
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

/// Collects the requirements a check found met or not met, and prints them.
class report {
 public:
  explicit report(std::string exercise) : exercise_(std::move(exercise)) {
    // Every line out at once (unitbuf: a flush after each output): the student's code runs
    // between two lines and can crash, and a line still in the buffer would be lost with it.
    std::cout << std::unitbuf;
    std::cout << "== exercise " << exercise_ << '\n';
  }

  /// One requirement: prints "ok" or "FAIL" and the text; remembers a failure.
  bool require(bool met, const std::string& what) {
    std::cout << (met ? "  ok    " : "  FAIL  ") << what << '\n';
    if (!met) failures_.push_back(what);
    return met;
  }

  /// A line that is information, not a requirement (timings, explanations).
  void note(const std::string& what) { std::cout << "  note  " << what << '\n'; }

  bool failed() const { return !failures_.empty(); }

  /// Prints the verdict; the exit status for main: 0 on PASS, 1 on FAIL.
  int finish() const {
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
  std::string exercise_;
  std::vector<std::string> failures_;
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
