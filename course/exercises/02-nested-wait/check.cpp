// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 02-nested-wait (scripts/grade-exercise.sh 02-nested-wait).
// Not for editing: your code is nested_wait.hpp.
//
// Every run gets a fresh blocking_pool and a bounded wait. While it waits, the check watches the
// pool's counters: when every worker has been inside a task for a while, no task has finished
// meanwhile and tasks wait in the queue, the workers are blocked waiting for work that only the
// queue holds — a deadlock. The check says so, abandons that pool (a deadlocked pool cannot be
// destroyed: its destructor would wait for the stuck tasks) and goes on with the next part.
//
// Fix 2 is then run once more on a pool with no thread at all, the check running every task
// itself, one at a time: a task that waits cannot be woken there (the only thread is busy
// waiting), so only continuations finish; and the check sees the shape of the computation itself
// (two tasks posted per call, done called by the last task with nothing left queued, no thread
// started), not a count the student's code could make up.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <course/check.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
// The given pool first: a submission that brings a blocking_pool of its own does not compile.
#include <blocking_pool.hpp>
#include <nested_wait.hpp>  // <>, not "": quotes would find the start's copy next to this file first
#include <set>
#include <string>
#include <system_error>

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using exercise::blocking_pool;

constexpr auto stall_limit = 3s;    // no task finished for this long while all workers are busy
constexpr auto answer_limit = 20s;  // no answer at all: a hang of another kind

bool abandoned_a_pool = false;

long fib_reference(int n) {
  return n < 2 ? n : fib_reference(n - 1) + fib_reference(n - 2);
}

struct outcome {
  bool answered = false;
  long value = 0;
  std::string why;  // when not answered
  std::uint64_t posted = 0, helped = 0;
};

// The ids of this process's threads: one entry per thread in /proc/self/task. That folder is
// Linux's; elsewhere (macOS) the check cannot list threads, says so once, and leaves this part
// to the instructor's grader, which runs on Linux.
bool can_list_threads() {
  std::error_code ec;
  return std::filesystem::is_directory("/proc/self/task", ec);
}

std::set<std::string> thread_ids() {
  std::set<std::string> ids;
  if (!can_list_threads()) return ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(entry.path().filename().string());
  }
  return ids;
}

// Whether a thread runs now that did not run at `before`. Not a count: threads of the earlier
// checks (a cheat's detached waiters) may still be ending, on a busy machine for a while, and
// each one that ends would hide one that started from a comparison of counts.
bool a_thread_started_since(const std::set<std::string>& before) {
  const std::set<std::string> now = thread_ids();
  return std::any_of(now.begin(), now.end(), [&](const std::string& id) { return before.count(id) == 0; });
}

// Makes a pool of `threads`, lets `start(pool, promise)` begin the computation (it must
// eventually set the promise from some task) and waits for the answer, watching for a deadlock.
template <class Start>
outcome run(std::size_t threads, Start start) {
  auto pool = std::make_unique<blocking_pool>(threads);
  auto answer = std::make_shared<std::promise<long>>();
  std::future<long> value = answer->get_future();
  const std::set<std::string> threads_before = thread_ids();  // the pool's workers included
  start(*pool, answer);

  outcome out;
  const auto begin = clock_type::now();
  auto last_progress = begin;
  std::uint64_t last_finished = pool->finished();
  while (value.wait_for(20ms) != std::future_status::ready) {
    const auto now = clock_type::now();
    if (const auto f = pool->finished(); f != last_finished) {
      last_finished = f;
      last_progress = now;
    }
    const std::size_t busy = pool->busy_workers(), queued = pool->queued();
    if (now - last_progress > stall_limit && busy == threads && queued > 0) {
      out.why = "deadlock: all " + std::to_string(threads) + " worker(s) have been inside tasks for " +
                std::to_string(stall_limit.count()) + " s with no task finishing, while " +
                std::to_string(queued) +
                " task(s) wait in the queue. Each worker waits for a result that only a queued task can "
                "produce (future::get blocks it; a wait that does not run queued tasks only spins), and no "
                "thread is left to run the queue.";
    } else if (now - begin > answer_limit) {
      out.why = "no answer after " + std::to_string(answer_limit.count()) + " s (" + std::to_string(busy) +
                " worker(s) busy, " + std::to_string(queued) +
                " task(s) queued): was the final done() ever called? (a lost continuation, or a wait)";
    } else {
      continue;
    }
    (void)pool.release();  // abandoned on purpose: see the file comment
    abandoned_a_pool = true;
    return out;
  }
  out.answered = true;
  out.value = value.get();
  out.posted = pool->posted();
  out.helped = pool->helped();
  if (a_thread_started_since(threads_before)) {
    // The submission's own threads may still post to the pool or run its tasks' callbacks:
    // destroying it under them would wake them into freed memory. Fix 2's step-by-step run says
    // what is wrong with such a thread; here the pool is only left alone.
    (void)pool.release();
    abandoned_a_pool = true;
    return out;
  }
  course::deadline drain("destroying the pool after the answer", 20s,
                         "a task still waits for something (a child no one runs?)");
  pool.reset();
  return out;
}

// Fix 2 on a pool with no thread (blocking_pool(0)): this thread runs every task, oldest first.
// Returns "" when fib_continuation(n) is continuations all the way down, else what it did instead.
//
// On a failure the pool is abandoned, not destroyed, and done writes into a shared record, not
// into this frame: a submission that started threads of its own may still call done, or post,
// after this function has returned. Destroying the pool would run its queued tasks (the
// destructor drains) and wake those threads into a pool being freed.
std::string fix2_step_by_step(int n) {
  auto pool = std::make_unique<blocking_pool>(0);
  const std::uint64_t expected_tasks =
      2 * static_cast<std::uint64_t>(fib_reference(n + 1)) - 2;  // calls - root
  const std::string what = "fib_continuation(" + std::to_string(n) + ") on a pool with no thread";
  course::deadline limit(what, 20s,
                         "a task waited: on a pool with no thread nothing else can run what it waits for, so "
                         "fix 2 must not wait at all");
  const std::set<std::string> threads_before = thread_ids();
  // What done saw; written by the task that calls it (this thread, unless the submission cheats).
  struct record {
    std::atomic<int> calls{0};
    std::atomic<long> value{-1};
    std::atomic<std::uint64_t> ran{0}, ran_before_done{0};
    std::atomic<std::size_t> queued_at_done{0};
  };
  const auto seen = std::make_shared<record>();
  blocking_pool* const p = pool.get();  // outlives every task: destroyed only after a clean run
  exercise::fib_continuation(*pool, n, [seen, p](long v) {
    seen->value = v;
    seen->ran_before_done = seen->ran.load();
    seen->queued_at_done = p->queued();
    ++seen->calls;
  });
  const auto fail = [&pool](std::string why) {
    (void)pool.release();  // abandoned on purpose: see above
    abandoned_a_pool = true;
    return why;
  };
  if (seen->calls != 0)
    return fail(what + ": done was called before any task ran (the answer was computed by the caller)");
  if (pool->posted() != 2) {
    return fail(what + ": the call posted " + std::to_string(pool->posted()) +
                " task(s); it must post exactly its two children and return");
  }
  while (seen->ran <= expected_tasks && pool->run_oldest()) {
    ++seen->ran;
    if (a_thread_started_since(threads_before)) {
      return fail(what +
                  ": a task started a thread of its own (a wait moved to another thread is still a wait)");
    }
  }
  const int calls = seen->calls;
  const long value = seen->value;
  const std::uint64_t ran = seen->ran, ran_before_done = seen->ran_before_done;
  const std::size_t queued_at_done = seen->queued_at_done;
  if (calls != 1) return fail(what + ": done was called " + std::to_string(calls) + " times, not once");
  if (value != fib_reference(n)) {
    return fail(what + ": done got " + std::to_string(value) + ", expected " +
                std::to_string(fib_reference(n)));
  }
  if (ran != expected_tasks || queued_at_done != 0 || ran_before_done + 1 != expected_tasks) {
    return fail(what + ": done was called by task " + std::to_string(ran_before_done + 1) + " with " +
                std::to_string(queued_at_done) + " task(s) still queued, of " + std::to_string(ran) +
                " run; one task per call (" + std::to_string(expected_tasks) +
                ") and done from the last of them: the answer must come from the children");
  }
  return "";
}

std::string name(const char* f, int n, std::size_t threads) {
  return std::string(f) + "(" + std::to_string(n) + ") on " + std::to_string(threads) + " thread(s)";
}

}  // namespace

// The hidden workload: only in the instructor's graders, which build the check with
// course/instructor/hidden/02-nested-wait/ on the include path; the hand-out has no such folder,
// and a student's run says the test exists and what it is worth (its rubric.json entry).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main() {
  course::report report("02-nested-wait");
  // A backstop for everything run() cannot see (the calling thread itself stuck in your code).
  course::deadline whole("the whole check", 240s, "a call into nested_wait.hpp that never returned");

  std::cout << "-- the problem: fib_blocking waits inside tasks (not graded)" << '\n';
  {
    const outcome o = run(2, [](blocking_pool& pool, std::shared_ptr<std::promise<long>> answer) {
      pool.post([&pool, answer] { answer->set_value(exercise::fib_blocking(pool, 12)); });
    });
    if (o.answered) {
      report.note("fib_blocking(12) on 2 threads finished: it should deadlock. Did you change it?");
    } else {
      report.note("fib_blocking(12) on 2 threads, as expected: " + o.why);
    }
  }

  const int sizes[] = {0, 1, 2, 10, 20};
  const std::size_t thread_counts[] = {1, 2, 4};

  std::cout << "-- fix 1: help_while_waiting (the root runs in a task, like a request handler)" << '\n';
  report.test("fix 1: fib_helping on 1, 2 and 4 threads");
  bool fix1 = true;
  for (std::size_t threads : thread_counts) {
    for (int n : sizes) {
      const outcome o = run(threads, [n](blocking_pool& pool, std::shared_ptr<std::promise<long>> answer) {
        pool.post([&pool, n, answer] { answer->set_value(exercise::fib_helping(pool, n)); });
      });
      const std::string what = name("fib_helping", n, threads);
      if (!o.answered) {
        fix1 = report.require(false, what + ": " + o.why);
      } else if (o.value != fib_reference(n)) {
        fix1 = report.require(false, what + " returned " + std::to_string(o.value) + ", expected " +
                                         std::to_string(fib_reference(n)));
      } else if (threads == 1 && n >= 2 && o.helped == 0) {
        // With one worker, the root's wait can only end if that same thread runs the children.
        fix1 = report.require(false, what +
                                         " finished but never called pool.try_run_one(): "
                                         "how did the only worker get its children run?");
      }
      if (!fix1) break;
    }
    if (!fix1) break;
  }
  if (fix1) report.require(true, "fix 1: fib_helping is right for n in {0,1,2,10,20} on 1, 2 and 4 threads");

  std::cout << "-- fix 2: fib_continuation (no task waits)" << '\n';
  report.test("fix 2: fib_continuation on 1, 2 and 4 threads");
  bool fix2 = true;
  for (std::size_t threads : thread_counts) {
    for (int n : sizes) {
      auto calls = std::make_shared<std::atomic<int>>(0);
      const outcome o =
          run(threads, [n, calls](blocking_pool& pool, std::shared_ptr<std::promise<long>> answer) {
            exercise::fib_continuation(pool, n, [calls, answer](long v) {
              if (calls->fetch_add(1) == 0) answer->set_value(v);
            });
          });
      const std::string what = name("fib_continuation", n, threads);
      if (!o.answered) {
        fix2 = report.require(false, what + ": " + o.why);
      } else if (o.value != fib_reference(n)) {
        fix2 = report.require(false, what + " passed " + std::to_string(o.value) + " to done, expected " +
                                         std::to_string(fib_reference(n)));
      } else if (calls->load() != 1) {
        fix2 = report.require(false,
                              what + " called done " + std::to_string(calls->load()) + " times, not once");
      } else if (o.helped != 0) {
        fix2 = report.require(false, what +
                                         " called pool.try_run_one(): that is fix 1 (helping while "
                                         "waiting); fix 2 must not wait at all");
      } else if (n >= 2 && o.posted < static_cast<std::uint64_t>(fib_reference(n))) {
        fix2 = report.require(false, what + " posted " + std::to_string(o.posted) +
                                         " tasks: each call with n >= 2 must post its two children");
      }
      if (!fix2) break;
    }
    if (!fix2) break;
  }
  if (fix2)
    report.require(true, "fix 2: fib_continuation is right for n in {0,1,2,10,20} on 1, 2 and 4 threads");
  report.test("fix 2: no task waits (a pool with no thread)");
  if (!can_list_threads()) {
    report.note(
        "this system has no /proc/self/task (not Linux): whether a task starts a thread of its own is "
        "not checked here; the instructor's grader, on Linux, checks it");
  }
  if (fix2) {
    std::string why;
    for (int n : {2, 10, 15}) {
      if (why = fix2_step_by_step(n); !why.empty()) break;
    }
    report.require(why.empty(), why.empty()
                                    ? "fix 2 on a pool with no thread (the check runs each task): two "
                                      "children posted per call, done from the last task, no wait"
                                    : why);
  }

#ifdef COURSE_HIDDEN_TESTS
  std::cout << "-- hidden" << '\n';
  hidden_tests(report);
#endif
  const int status = report.finish();
  if (abandoned_a_pool) {
    // The abandoned pools' threads are stuck for good; leave without waiting for anything.
    std::fflush(nullptr);
    std::_Exit(status);
  }
  return status;
}
