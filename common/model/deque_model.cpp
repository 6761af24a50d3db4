// SPDX-License-Identifier: MIT
// deque_model.cpp — Relacy model test of pools::chase_lev_deque (pools/chase_lev_deque.hpp).
//
// The production header is included first, before Relacy's macros exist, and instantiated with
// the Relacy atomics policy: the code checked is the code the pool runs. Two scenarios, each
// explored for a fixed number of random schedules:
//   * race:   the owner pushes and pops (forcing the ring to grow twice) while two thieves steal;
//   * last:   owner and thief fight over the last element again and again.
// After every schedule, each pushed value must have been taken exactly once, and nothing else.
//
// Built three times (common/CMakeLists.txt): POOLS_CHASE_LEV_MUTANT=0 must pass; 1 (pop()'s seq_cst
// fence weakened to acq_rel) and 2 (push()'s release store of bottom weakened to relaxed) must
// be reported by Relacy. main() returns 0 exactly when the outcome is the expected one.
#include <pools/chase_lev_deque.hpp>

#include <cstdio>
#include <cstdlib>

#include "relacy_atomics.hpp"

namespace {

using pools::chase_lev_deque;
using pools::steal_status;
using pools::model::relacy_atomics;
using deque_t = chase_lev_deque<int, relacy_atomics>;

constexpr int max_value = 8;

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
      RL_ASSERT(v >= 1 && v <= pushed);  // a value never pushed (e.g. an unwritten slot) is a bug
      if (v >= 1 && v <= pushed) ++seen[v];
    }
  }
  for (int v = 1; v <= pushed; ++v) RL_ASSERT(seen[v] == 1);  // lost or taken twice
}

// Owner: push 1..5 with pops in between (capacity 2 -> grows to 4 and 8), then pop until empty.
// Thieves: a few steal attempts each.
struct race_test : rl::test_suite<race_test, 3> {
  deque_t* dq;
  taken_log logs[3];
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
    // Items a thief gave up on (lost race / empty) are still in the deque: drain them.
    int v = 0;
    while (dq->pop(v)) logs[0].add(v);
    check_exactly_once(logs, 3, pushed);
    delete dq;
  }
};

// The last-element race: push one, then owner pops while the thief steals; repeated.
struct last_element_test : rl::test_suite<last_element_test, 2> {
  deque_t* dq;
  taken_log logs[2];
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
    check_exactly_once(logs, 2, pushed);
    delete dq;
  }
};

template <class Test>
bool passes(const char* name, rl::iteration_t iterations) {
  rl::test_params params;
  params.iteration_count = iterations;
  params.search_type = rl::random_scheduler_type;
  std::printf("--- %s: %llu random schedules\n", name, static_cast<unsigned long long>(iterations));
  std::fflush(stdout);
  return rl::simulate<Test>(params);
}

}  // namespace

int main(int argc, char** argv) {
  // Enough schedules that each mutant is found in every run observed (it takes thousands), small
  // enough for CI: a few seconds per build. An argument overrides the count.
  const rl::iteration_t iterations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const bool race_ok = passes<race_test>("race: owner push/pop with growth vs two thieves", iterations);
  const bool last_ok = passes<last_element_test>("last element: owner pop vs thief steal", iterations);
  const bool all_ok = race_ok && last_ok;
#if POOLS_CHASE_LEV_MUTANT == 0
  std::printf(all_ok ? "model: the deque passed every schedule\n"
                     : "model: Relacy found a bug in the deque\n");
  return all_ok ? 0 : 1;
#else
  std::printf(all_ok ? "model: mutant %d NOT caught: the model test cannot see this order\n"
                     : "model: mutant %d caught, as it must be\n",
              POOLS_CHASE_LEV_MUTANT);
  return all_ok ? 1 : 0;
#endif
}
