// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 04-memory-order (scripts/grade-exercise.sh 04-memory-order).
// Not for editing: your code is chase_lev_deque.hpp.
//
// A Relacy model test of your deque, the same as the repository's own (common/model/deque_model.cpp).
// Relacy (Dmitry Vyukov's relacy race detector, Debian relacy-dev) runs the threads of a scenario
// as fibers under its own scheduler, one random schedule after another, and simulates the C++
// memory model: a relaxed load may return any value the model allows, not just the latest one.
// Two scenarios, each for a fixed number of schedules:
//   * race: the owner pushes and pops (the ring grows twice) while two thieves steal;
//   * last element: owner and one thief fight over the last element, again and again.
// After every schedule, each pushed value must have been taken exactly once, and nothing else.
// When a schedule breaks that, Relacy stops and prints it (every thread's loads and stores, with
// the values they saw, and the line of your file each came from); this check then says what broke.
#include <chase_lev_deque.hpp>  // <>, not "": quotes would find the start's copy next to this file first
#include <chrono>
#include <course/check.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

// Relacy last: it defines macros (new, delete, assert, memory_order_*) that would break the
// standard headers included after it.
#include <relacy_atomics.hpp>  // common/model/: the Atomics policy with Relacy's atomics

namespace {

using exercise::steal_status;
using deque_t = exercise::chase_lev_deque<int, pools::model::relacy_atomics>;

constexpr int max_value = 8;

// What the failing schedule broke, in words. A plain buffer: during a simulation Relacy owns the
// heap (its operator new), so nothing allocated there may outlive the simulation.
char broken[200] = "";

// Schedules in which a thief took a value: a deque whose steal() always says "empty" still has
// every value taken exactly once (by the owner), so the check also requires steals that succeed.
long schedules_with_a_steal = 0;

// Each thread records what it took in its own array (no shared writes); after() merges them.
struct taken_log {
  int values[max_value + 4];
  int count;
  void add(int v) {
    RL_ASSERT(count < max_value + 4);
    values[count++] = v;
  }
};

void check_exactly_once(const taken_log* logs, int threads, int pushed) {
  int seen[max_value + 1] = {};
  for (int t = 0; t < threads; ++t) {
    for (int i = 0; i < logs[t].count; ++i) {
      const int v = logs[t].values[i];
      if (v < 1 || v > pushed) {
        std::snprintf(broken, sizeof broken,
                      "%s took the value %d, which was never pushed (it read a slot before the value pushed "
                      "there was visible to it)",
                      t == 0 ? "the owner" : "a thief", v);
        RL_ASSERT(!"a value that was never pushed was taken");
        return;
      }
      ++seen[v];
    }
  }
  for (int v = 1; v <= pushed; ++v) {
    if (seen[v] != 1) {
      std::snprintf(broken, sizeof broken, "the value %d was %s", v,
                    seen[v] == 0 ? "lost (pushed, never taken)" : "taken twice");
      RL_ASSERT(!"a value was lost or taken twice");
      return;
    }
  }
}

// Owner: push 1..5 with pops in between (capacity 2 -> grows to 4 and 8), then pop until empty.
// Thieves: a few steal attempts each.
struct race_test : rl::test_suite<race_test, 3> {
  deque_t* dq = nullptr;
  taken_log logs[3]{};
  static constexpr int pushed = 5;

  void before() {
    dq = new deque_t(2);
    for (auto& l : logs) l.count = 0;
  }
  void thread(unsigned index) {
    int v = 0;
    if (index == 0) {
      dq->push(1);
      dq->push(2);
      dq->push(3);
      if (dq->pop(v)) logs[0].add(v);
      dq->push(4);
      dq->push(5);
      while (dq->pop(v)) logs[0].add(v);
    } else {
      for (int attempt = 0; attempt < 3; ++attempt) {
        const auto r = dq->steal();
        if (r.status == steal_status::success) logs[index].add(r.value);
      }
    }
  }
  void after() {
    int v = 0;
    while (dq->pop(v)) logs[0].add(v);  // what the thieves gave up on is still in the deque
    if (logs[1].count + logs[2].count > 0) ++schedules_with_a_steal;
    check_exactly_once(logs, 3, pushed);
    delete dq;
  }
};

// The last-element race: push one, then the owner pops while the thief steals; repeated.
struct last_element_test : rl::test_suite<last_element_test, 2> {
  deque_t* dq = nullptr;
  taken_log logs[2]{};
  static constexpr int pushed = 3;

  void before() {
    dq = new deque_t(2);
    for (auto& l : logs) l.count = 0;
  }
  void thread(unsigned index) {
    int v = 0;
    if (index == 0) {
      for (int i = 1; i <= pushed; ++i) {
        dq->push(i);
        if (dq->pop(v)) logs[0].add(v);
      }
    } else {
      for (int attempt = 0; attempt < 3; ++attempt) {
        const auto r = dq->steal();
        if (r.status == steal_status::success) logs[1].add(r.value);
      }
    }
  }
  void after() {
    int v = 0;
    while (dq->pop(v)) logs[0].add(v);
    if (logs[1].count > 0) ++schedules_with_a_steal;
    check_exactly_once(logs, 2, pushed);
    delete dq;
  }
};

template <class Test>
void scenario(course::report& report, const std::string& name, rl::iteration_t iterations) {
  std::cout << "-- " << name << ": " << iterations << " random schedules" << '\n';
  course::deadline limit(name, std::chrono::seconds(120),
                         "Relacy explores a bounded number of schedules; a schedule that never ends is a "
                         "loop that waits for something no thread will do (did the algorithm change?)");
  report.test(name);
  broken[0] = '\0';
  schedules_with_a_steal = 0;
  rl::test_params params;
  params.iteration_count = iterations;
  params.search_type = rl::random_scheduler_type;
  const bool passed = rl::simulate<Test>(params);
  std::fflush(stdout);
  std::cout.flush();
  const std::string prefix = name + ": ";
  if (passed) {
    report.require(true, prefix + "every pushed value was taken exactly once, in every schedule");
    report.require(schedules_with_a_steal > 0,
                   prefix + (schedules_with_a_steal > 0
                                 ? "thieves took values (in " + std::to_string(schedules_with_a_steal) +
                                       " of " + std::to_string(iterations) + " schedules)"
                                 : "no thief took a value in any of the " + std::to_string(iterations) +
                                       " schedules: steal() must succeed when the deque holds values"));
  } else {
    report.require(
        false,
        prefix + "Relacy found a schedule in which " +
            (broken[0] != '\0'
                 ? std::string(broken)
                 : std::string("Relacy itself reported an error (its name is the second line of its report "
                               "above, e.g. ACCESS TO UNINITIALIZED VARIABLE)")) +
            ". The schedule is printed above: follow the value through the loads and "
            "stores of each thread, and ask which one read a stale value, and why it "
            "was allowed to");
  }
}

}  // namespace

// The hidden scenario: only in the instructor's graders, which build the check with
// course/instructor/hidden/04-memory-order/ on the include path; the hand-out has no such folder,
// and a student's run says the test exists and what it is worth (its rubric.json entry).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main(int argc, char** argv) {
  course::report report("04-memory-order");
  // Enough schedules that the weakened order is found in every run observed (it takes thousands),
  // few enough for a few seconds. An argument overrides the count.
  const rl::iteration_t iterations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  scenario<race_test>(report, "race: owner push/pop with growth vs two thieves", iterations);
  scenario<last_element_test>(report, "last element: owner pop vs thief steal", iterations);
#ifdef COURSE_HIDDEN_TESTS
  hidden_tests(report, iterations);
#endif
  return report.finish();
}
