// SPDX-License-Identifier: MIT
// fork_join_model.cpp — Relacy model test of the work-first join (pools/fork_join_counter.hpp,
// used by pools/coroutines/fork_scope.hpp through detail/fork_state.hpp).
//
// The production header is included first and instantiated with the Relacy atomics policy (as
// deque_model.cpp does for the deque): the counter checked is the counter the pool runs. The
// scenario is a parent that forked three children: one finished inline (it popped the parent
// back: a plain joined_inline()), and two whose parent was stolen, so each arrives atomically
// from its own thread while the parent, on a third thread, reaches its join:
//
//   thread 0: child A writes its result; child_arrives()   -> if last: resume the parent
//   thread 1: child B writes its result; child_arrives()   -> if last: resume the parent
//   thread 2: the parent writes a local; parent_arrives() -> if last: go on itself
//
// "Resuming the parent" reads both results and the parent's local, as the parent's code after
// the join does. The results and the local are Relacy `rl::var`s: a read that does not
// happen-after the write is reported as a data race. After every schedule, exactly one thread
// resumed the parent, once, and the counter is back at rest (pending 0, so it can be reused; a
// second join of the same counter follows inline: no RMW, nothing pending).
//
// Built three times (common/CMakeLists.txt): POOLS_FORK_JOIN_MUTANT=0 must pass; 1 (a child's
// acq_rel fetch_sub weakened to relaxed) and 2 (the parent's acq_rel fetch_add weakened to
// relaxed) must be reported by Relacy. main() returns 0 exactly when the outcome is the expected
// one.
#include <pools/fork_join_counter.hpp>

#include <cstdio>
#include <cstdlib>

#include "park_support.hpp"  // passes(), iterations_from(), verdict(): shared by the models
#include "relacy_atomics.hpp"

namespace {

using pools::model::relacy_atomics;
using counter_t = pools::fork_join_counter<relacy_atomics>;

struct join_test : rl::test_suite<join_test, 3> {
  counter_t* counter;
  rl::var<int> result_a, result_b, parent_local;
  int resumed_by[3];

  void before() {
    counter = new counter_t;
    // The parent's forks happened before the threads started (their hand-off to a thief is the
    // deque's job, model_chase_lev_deque): A and B were taken, C finished inline.
    counter->forked();  // A
    counter->forked();  // B
    counter->forked();  // C
    counter->joined_inline();
    for (int& r : resumed_by) r = 0;
  }

  void resume_parent(unsigned index) {
    // What the parent does after the join: reads its children's results and its own locals.
    RL_ASSERT(result_a($) == 1);
    RL_ASSERT(result_b($) == 2);
    RL_ASSERT(parent_local($) == 3);
    ++resumed_by[index];
    // The parent's next fork/join with the same counter, all inline: nothing atomic, nothing left.
    counter->forked();
    counter->joined_inline();
    RL_ASSERT(counter->pending() == 0);
  }

  void thread(unsigned index) {
    if (index == 0) {
      result_a($) = 1;
      if (counter->child_arrives()) resume_parent(index);
    } else if (index == 1) {
      result_b($) = 2;
      if (counter->child_arrives()) resume_parent(index);
    } else {
      parent_local($) = 3;
      RL_ASSERT(counter->pending() == 2);
      if (counter->parent_arrives()) resume_parent(index);
    }
  }

  void after() {
    RL_ASSERT(resumed_by[0] + resumed_by[1] + resumed_by[2] == 1);  // exactly once, by one thread
    RL_ASSERT(counter->pending() == 0);
    delete counter;
  }
};

}  // namespace

int main(int argc, char** argv) {
  // Each mutant is found within a few schedules; an argument overrides the count.
  const rl::iteration_t iterations = pools::model::iterations_from(argc, argv, 100000);
  const bool ok =
      pools::model::passes<join_test>("join: two stolen children and the parent arrive", iterations);
  const char* const mutants[] = {"", "a child's arrival relaxed", "the parent's arrival relaxed"};
  return pools::model::verdict("the work-first join", POOLS_FORK_JOIN_MUTANT, mutants[POOLS_FORK_JOIN_MUTANT],
                               ok);
}
