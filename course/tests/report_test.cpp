// SPDX-License-Identifier: MIT
// course::report (course/common/course/check.hpp), the checks' channel to the grader, when a
// step hangs: the watchdog thread ends the open test with report::abandon() and then the
// process, while the main thread may still be reporting. The grader (course/tools/grade_run.py)
// must then receive whole lines, the abandoned test last, and nothing the main thread reported
// after it. Each case runs the report in a child process, as the grader runs a check.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "course/check.hpp"

namespace {

// Runs `body` in a child process whose report writes to a pipe, as the grader sets it up; returns
// the lines the grader would read and the child's exit status.
template <class Body>
std::vector<std::string> run_check(Body body, int& status) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);  // the report's human-readable lines: not what is checked
    ::setenv("COURSE_RESULT_FD", std::to_string(fds[1]).c_str(), 1);
    ::setenv("COURSE_RESULT_NONCE", "nonce", 1);
    body();
    std::_Exit(0);
  }
  ::close(fds[1]);
  std::string all;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    all.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::waitpid(pid, &status, 0);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\n', at);
    if (end == std::string::npos) {
      lines.push_back(all.substr(at));  // a line cut short: fails the checks below
      break;
    }
    lines.push_back(all.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

bool whole(const std::string& line) {
  return line.starts_with("{\"nonce\":\"nonce\",\"test\":\"") && line.ends_with("\"}");
}

}  // namespace

TEST_CASE("a test abandoned from another thread is the last line the grader receives") {
  int status = 0;
  const std::vector<std::string> lines = run_check(
      [] {
        course::report report("abandon");
        // The watchdog: fires while the main thread is busy reporting, then ends the process.
        std::thread watchdog([&report] {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          report.abandon("the step hung");
          // As the watchdog flushes and ends the process next; the pause gives a main thread that
          // could still report (without the lock it could) the time to show it.
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          std::_Exit(1);
        });
        watchdog.detach();
        // The main thread reports test after test, as fast as it can, until the process ends.
        for (long i = 0;; ++i) {
          report.test(std::to_string(i));
          report.require(true, "a requirement met");
        }
      },
      status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  REQUIRE(lines.size() >= 2);  // some tests passed before the watchdog fired
  for (const std::string& line : lines) CHECK_MESSAGE(whole(line), line);
  // Each test reported once (the grader refuses a run that reports one twice).
  std::vector<std::string> names;
  for (const std::string& line : lines) names.push_back(line.substr(0, line.find("\",\"passed\"")));
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  // Every test but the last passed; the last is the abandoned one: nothing came after it.
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    CHECK_MESSAGE(lines[i].find("\"passed\":true") != std::string::npos, lines[i]);
  }
  CHECK(lines.back().find("\"passed\":false") != std::string::npos);
  CHECK(lines.back().find("FAIL  the step hung") != std::string::npos);
}

TEST_CASE("a check that ends normally reports each test and its verdict") {
  int status = 0;
  const std::vector<std::string> lines = run_check(
      [] {
        course::report report("normal");
        report.test("first");
        report.require(true, "met");
        report.test("second");
        report.require(false, "not met");
        std::_Exit(report.finish());
      },
      status);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  REQUIRE(lines.size() == 3);
  CHECK(whole(lines[0]));
  CHECK(lines[0].find("\"test\":\"first\",\"passed\":true") != std::string::npos);
  CHECK(lines[1].find("\"test\":\"second\",\"passed\":false") != std::string::npos);
  CHECK(lines[2] == "{\"nonce\":\"nonce\",\"finish\":\"FAIL\"}");
}
