// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 03-work-stealing (scripts/grade-exercise.sh 03-work-stealing).
// Not for editing: your code is stealing_pool.hpp.
//
// Three parts:
//  1. correctness: every task runs exactly once (posts from outside, from tasks, from several
//     threads at once; the destructor drains), and fib is right;
//  2. stealing happens: with 2 workers, fib makes posts from tasks go onto the posting worker's
//     deque and idle workers take from the others'. The check counts both itself, through the
//     deques it hands out (work_deque.hpp reports every push and every steal by a thread other
//     than the deque's owner), and requires the pool's steals() and local_pushes() to agree: a
//     counter cannot claim what the deques did not see;
//  3. timing, not graded here: fib on your pool against shared_queue_pool.hpp, the median of a
//     few runs, for you to read. Speed is graded by the hidden tests (your instructor's grader):
//     fork-join and submission times against the reference pool in the same run (rubric.json).
// Every step runs under a course::deadline, so a hang (a lost wake-up, a drain that never ends)
// fails the check with the step's name instead of blocking it.
#include <pools/unique_function.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <course/check.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <shared_queue_pool.hpp>
#include <stealing_pool.hpp>  // <>, not "": quotes would find the start's copy next to this file first
#include <string>
#include <thread>
#include <vector>
#include <work_deque.hpp>

namespace {

// What the deques of work_deque.hpp report, counted per thread (no cache line shared between the
// workers on their hot path) in blocks that outlive the threads (the pools come and go), summed
// when the check looks.
struct alignas(64) thread_events {
  std::atomic<std::uint64_t> pushes{0}, steals{0}, failed_steals{0};
};
std::mutex events_mutex;           // guards events (the list, not the counters)
std::deque<thread_events> events;  // a deque: its elements never move
thread_local thread_events* my_events = nullptr;

thread_events& mine() {
  if (my_events == nullptr) {
    std::lock_guard lock(events_mutex);
    my_events = &events.emplace_back();
  }
  return *my_events;
}

// relaxed: each counter is written by its thread alone; the check reads them after the run it
// counts has finished (its answer came through a promise, which orders everything before it).
void bump(std::atomic<std::uint64_t>& counter) {
  counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

struct seen {
  std::uint64_t pushes = 0, steals = 0, failed_steals = 0;
};
seen deques_saw() {
  std::lock_guard lock(events_mutex);
  seen total;
  for (const auto& e : events) {
    total.pushes += e.pushes.load(std::memory_order_relaxed);
    total.steals += e.steals.load(std::memory_order_relaxed);
    total.failed_steals += e.failed_steals.load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace

void exercise::deque_events::pushed() {
  bump(mine().pushes);
}
void exercise::deque_events::stolen_by_another_thread() {
  bump(mine().steals);
}
void exercise::deque_events::steal_failed_for_another_thread() {
  bump(mine().failed_steals);
}

namespace {

using namespace std::chrono_literals;
using exercise::shared_queue_pool;
using exercise::stealing_pool;

long fib_reference(int n) {
  return n < 2 ? n : fib_reference(n - 1) + fib_reference(n - 2);
}

// fib(n) with one task per call, in continuation-passing style (a pool with only post() cannot
// let a task wait for its children): the child that finishes last adds the results and continues
// its parent. `posts` counts every post, so the check knows how many tasks a run made.
template <class Pool>
void fib(Pool& pool, int n, std::atomic<std::uint64_t>& posts, pools::unique_function<void(long)> done) {
  if (n < 2) {
    done(n);
    return;
  }
  struct join {
    std::atomic<int> pending{2};
    long results[2] = {0, 0};
    pools::unique_function<void(long)> done;
  };
  auto shared = std::make_shared<join>();
  shared->done = std::move(done);
  for (int i = 0; i < 2; ++i) {
    posts.fetch_add(1, std::memory_order_relaxed);
    pool.post([&pool, &posts, n, i, shared] {
      fib(pool, n - 1 - i, posts, [i, shared](long value) {
        shared->results[i] = value;
        if (shared->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          shared->done(shared->results[0] + shared->results[1]);
        }
      });
    });
  }
}

// Runs fib(n) on `pool` from this (outside) thread and waits for the answer.
template <class Pool>
long run_fib(Pool& pool, int n, std::atomic<std::uint64_t>& posts) {
  std::promise<long> answer;
  std::future<long> value = answer.get_future();
  fib(pool, n, posts, [&answer](long v) { answer.set_value(v); });
  return value.get();
}

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

const std::string hang_why =
    "a hang: a lost wake-up (work on a deque while every other worker sleeps, unwoken), or a "
    "destructor that does not wait for the tasks still running or queued";

void correctness(course::report& report, std::size_t threads) {
  const std::string on = " (" + std::to_string(threads) + " thread(s))";
  {
    course::deadline limit("200,000 posts from outside" + on, 60s, hang_why);
    std::vector<std::atomic<std::uint8_t>> runs(200'000);
    {
      stealing_pool pool(threads);
      report.require(pool.concurrency() == threads, "concurrency() is " + std::to_string(pool.concurrency()) +
                                                        ", the number of threads" + on);
      for (auto& r : runs) pool.post([&r] { r.fetch_add(1, std::memory_order_relaxed); });
    }  // the destructor drains
    const std::string bad = exactly_once(runs);
    report.require(bad.empty(),
                   "every task posted from outside ran exactly once" + on + (bad.empty() ? "" : ": " + bad));
  }
  {
    course::deadline limit("a tree of tasks posted from tasks" + on, 60s, hang_why);
    constexpr std::size_t leaves = 1 << 16;
    std::vector<std::atomic<std::uint8_t>> runs(2 * leaves);  // heap order: node i's children are 2i, 2i+1
    {
      stealing_pool pool(threads);
      struct node {
        static void visit(stealing_pool& p, std::vector<std::atomic<std::uint8_t>>& r, std::size_t i) {
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
    report.require(bad.empty(),
                   "every task of a tree posted from tasks ran exactly once, drained by the destructor" + on +
                       (bad.empty() ? "" : ": " + bad));
  }
  {
    course::deadline limit("4 threads posting at once" + on, 60s, hang_why);
    constexpr std::size_t per_thread = 25'000;
    std::vector<std::atomic<std::uint8_t>> runs(4 * 2 * per_thread);  // each outside post posts one more
    {
      stealing_pool pool(threads);
      std::vector<std::thread> posters;
      for (std::size_t p = 0; p < 4; ++p) {
        posters.emplace_back([&, p] {
          for (std::size_t k = 0; k < per_thread; ++k) {
            const std::size_t i = 2 * (p * per_thread + k);
            pool.post([&pool, &runs, i] {
              runs[i].fetch_add(1, std::memory_order_relaxed);
              pool.post([&runs, i] { runs[i + 1].fetch_add(1, std::memory_order_relaxed); });
            });
          }
        });
      }
      for (auto& t : posters) t.join();
    }
    const std::string bad = exactly_once(runs);
    report.require(bad.empty(),
                   "4 threads posting at once, each task posting one more: all ran exactly once" + on +
                       (bad.empty() ? "" : ": " + bad));
  }
  {
    course::deadline limit("fib" + on, 60s, hang_why);
    stealing_pool pool(threads);
    std::atomic<std::uint64_t> posts{0};
    std::string wrong;
    for (int n : {0, 1, 2, 15, 25}) {
      if (const long got = run_fib(pool, n, posts); got != fib_reference(n)) {
        wrong = "fib(" + std::to_string(n) + ") = " + std::to_string(got) + ", expected " +
                std::to_string(fib_reference(n));
        break;
      }
    }
    report.require(wrong.empty(),
                   "fib(n) is right for n in {0,1,2,15,25}" + on + (wrong.empty() ? "" : ": " + wrong));
  }
}

// Whether the stealing test saw pushes and steals: the speed tests grade a pool that steals.
bool stealing_seen = false;

void stealing(course::report& report) {
  course::deadline limit("fib(25) on 2 threads, counting pushes and steals", 60s, hang_why);
  stealing_pool pool(2);
  const seen before = deques_saw();  // the correctness part's pools pushed and stole too
  auto now = [&before] {
    const seen s = deques_saw();
    return seen{s.pushes - before.pushes, s.steals - before.steals, s.failed_steals - before.failed_steals};
  };
  std::atomic<std::uint64_t> posts{0};
  // The test opens before the runs: a hang in them fails this test, not the correctness one.
  report.test("a task's posts go onto its worker's own deque, and other workers steal them");
  // One run almost always steals; a few are allowed in case the machine keeps one worker off the
  // CPU for a whole run (a busy CI machine). The runs go on until a steal has also failed: only
  // then does a steals() that counts attempts say more than the deques saw (on a busy machine
  // every one of a run's few attempts may succeed, and such a counter would agree by luck).
  for (int attempt = 0; attempt < 10 && (now().steals == 0 || now().pushes == 0 || now().failed_steals == 0);
       ++attempt) {
    run_fib(pool, 25, posts);
  }
  const seen saw = now();
  stealing_seen = saw.pushes > 0 && saw.steals > 0;
  const std::uint64_t steals = pool.steals(), pushes = pool.local_pushes(), total = posts.load();
  report.require(saw.pushes > 0,
                 "the workers' deques (work_deque.hpp) saw " + std::to_string(saw.pushes) +
                     " pushes during fib(25) on 2 threads" +
                     (saw.pushes > 0 ? ""
                                     : ": posts from inside a task do not go onto the posting "
                                       "worker's own exercise::work_deque"));
  report.require(saw.steals > 0, "the deques saw " + std::to_string(saw.steals) +
                                     " steals by another worker during fib(25) on 2 threads" +
                                     (saw.steals > 0 ? ""
                                                     : ": no worker ever took a task from another worker's "
                                                       "exercise::work_deque"));
  report.test("steals() and local_pushes() agree with the deques");
  // Counters of nothing agree with nothing: this test needs pushes and steals to count.
  report.require(saw.pushes > 0 && saw.steals > 0,
                 "counters to compare: the deques saw pushes and steals (needed by this test)");
  report.require(pushes == saw.pushes && steals == saw.steals,
                 "your counters agree with the deques: local_pushes() " + std::to_string(pushes) +
                     ", pushes seen " + std::to_string(saw.pushes) + "; steals() " + std::to_string(steals) +
                     ", steals seen " + std::to_string(saw.steals) +
                     (pushes == saw.pushes && steals == saw.steals
                          ? ""
                          : " (a push counts once, when a worker pushes onto its own deque; a steal once, "
                            "when steal() on another worker's deque returns success)"));
  if (saw.pushes > 0 && saw.steals > 0) {
    char line[300];
    std::snprintf(line, sizeof line,
                  "of %llu posts, %llu went onto a worker's own deque and %llu were stolen (1 in %llu): "
                  "a thief takes the oldest task, in fork-join the biggest, so few steals balance the work",
                  static_cast<unsigned long long>(total), static_cast<unsigned long long>(saw.pushes),
                  static_cast<unsigned long long>(saw.steals),
                  static_cast<unsigned long long>(total / saw.steals));
    report.note(line);
  }
}

template <class Pool>
double fib_ms(int n, std::size_t threads) {
  std::vector<double> times;
  Pool pool(threads);
  std::atomic<std::uint64_t> posts{0};
  run_fib(pool, n, posts);  // warm-up: threads started, allocator primed
  for (int rep = 0; rep < 5; ++rep) {
    const auto begin = std::chrono::steady_clock::now();
    run_fib(pool, n, posts);
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void timing(course::report& report) {
  course::deadline limit("timing fib(27)", 120s, hang_why);
  constexpr int n = 27;
  const std::size_t threads = std::max(2u, std::min(4u, std::thread::hardware_concurrency()));
  const double base = fib_ms<shared_queue_pool>(n, threads);
  const double yours = fib_ms<stealing_pool>(n, threads);
  char line[200];
  std::snprintf(
      line, sizeof line,
      "timing (not graded): fib(%d) on %zu threads, median of 5: shared queue %.1f ms, yours %.1f ms "
      "= %.2fx the shared queue's time (below 1 is faster)",
      n, threads, base, yours, yours / base);
  report.note(line);
}

}  // namespace

// The hidden workload: only in the instructor's graders, which build the check with
// course/instructor/hidden/03-work-stealing/ on the include path; the hand-out has no such folder,
// and a student's run says the test exists and what it is worth (its rubric.json entry).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main() {
  course::report report("03-work-stealing");
  std::cout << "-- correctness" << '\n';
  report.test("every task runs exactly once on 1, 2 and 4 threads");
  for (std::size_t threads : {1, 2, 4}) correctness(report, threads);
  std::cout << "-- stealing" << '\n';
  stealing(report);
#ifdef COURSE_HIDDEN_TESTS
  std::cout << "-- hidden" << '\n';
  hidden_tests(report);
#endif
  // Not graded: the last test is reported first, so that a slow or hung timing run (its deadline)
  // cannot abandon it and take its points.
  report.end_graded();
  std::cout << "-- timing" << '\n';
  timing(report);
  return report.finish();
}
