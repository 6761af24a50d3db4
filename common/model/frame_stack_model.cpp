// SPDX-License-Identifier: MIT
// frame_stack_model.cpp — Relacy model test of the stack-of-frames handover
// (pools/coroutines/frame_stack.hpp, used by stack_task.hpp with fork_scope.hpp).
//
// A stack's top is an `rl::var`: a plain variable, so two threads that touch it without a
// happens-before between them are reported as a data race — which is what a worker reusing a
// stack that another thread frees from would be. The join counter is the production one
// (pools/fork_join_counter.hpp with Relacy's atomics, as in fork_join_model.cpp); the deque is
// abstracted to one slot holding the parent's continuation, taken by a CAS (acq_rel) either by the
// forking worker's pop (the parent comes back: case 1) or by the thief's steal. Each worker's
// state (its current stack and a spare empty one) is its own, plain.
//
//   steal: thread 0 (the victim) runs the parent: a, b = two frames on its stack S1; fork a:
//          publish the continuation; a runs (a frame of its own child pushed and popped) and
//          finishes: it pops the continuation back (case 1: the parent goes on here) or finds it
//          taken (case 2: give S1 up if it holds frames, then arrive at the counter). Then it does
//          other work: a frame pushed and popped on its current stack.
//          thread 1 (the thief) steals the continuation, if it is there: runs b (b's child on its
//          own stack S2), makes d (a frame on S2, freed after the join), and joins: if a is not
//          back it gives S2 up and arrives. Then other work on its current stack.
//          Whoever arrives last goes on with the parent: frees d, b, a (LIFO on their stacks).
//   suspend: thread 0 runs a child c that pushes a frame x, then suspends at an event: it gives
//          S1 up (await_transform), publishes c (release), and does other work. Thread 1, or
//          thread 0 itself later, takes c (exchange) and resumes it: c frees x from S1.
// After every schedule: the parent went on exactly once, c ran to its end exactly once, every
// stack is empty, and each stack given up was recycled exactly once (by its last frame's free).
//
// Built seven times (common/CMakeLists.txt): POOLS_FRAME_STACK_MUTANT=0 must pass; each mutant
// must be reported by Relacy:
//   1  a child whose parent was taken does not give its stack up (case a);
//   2  it arrives at the counter first and gives the stack up after;
//   3  a suspension (an event, a lock) does not give the stack up (case c);
//   4  a parent waiting at its join does not give its stack up (case b);
//   5  a suspension gives the stack up after it published the coroutine (the `waiting` store);
//   6  a parent waiting at its join gives its stack up after its arrival (parent_arrives).
// main() returns 0 exactly when the outcome is the expected one.
#include <pools/fork_join_counter.hpp>

#include <cstdio>
#include <cstdlib>

#include "park_support.hpp"  // passes(), iterations_from(), verdict(): shared by the models
#include "relacy_atomics.hpp"

namespace {

using pools::model::relacy_atomics;
using counter_t = pools::fork_join_counter<relacy_atomics>;
constexpr int mutant = POOLS_FRAME_STACK_MUTANT;

struct stack_t {
  rl::var<int> top;        // frames on it
  rl::var<int> abandoned;  // given up to its frames
  rl::var<int> recycled;   // its last frame freed after it was given up
  void init() {
    top($) = 0;
    abandoned($) = 0;
    recycled($) = 0;
  }
};

struct frame {
  stack_t* s;
  int index;
};

struct worker_t {
  stack_t* current;
  stack_t* spare;  // the cache of empty stacks: one is enough here
};

frame push(stack_t* s) {
  const int i = s->top($);
  s->top($) = i + 1;
  return {s, i};
}

void pop(frame f) {
  RL_ASSERT(f.s->top($) == f.index + 1);  // the top frame (frame_stack's misuse check)
  f.s->top($) = f.index;
  if (f.index == 0 && f.s->abandoned($) == 1) f.s->recycled($) = f.s->recycled($) + 1;
}

// frame_stack::leave_strand(): a stack that holds frames is given up, an empty one is kept.
void leave_strand(worker_t& w) {
  if (w.current->top($) != 0) {
    w.current->abandoned($) = 1;
    w.current = w.spare;
    w.spare = nullptr;
  }
}

// The next strand this worker runs: a frame pushed and popped on its current stack.
void other_work(worker_t& w) {
  pop(push(w.current));
}

struct steal_test : rl::test_suite<steal_test, 2> {
  counter_t* counter;
  relacy_atomics::atomic<int> slot;  // the parent's continuation in the victim's deque
  stack_t stacks[4];                 // S1, S2: the workers' current stacks; S3, S4: their spares
  worker_t workers[2];
  rl::var<int> result_a, result_b;
  frame fa, fb, fd;  // the parent's locals (in its frame: handed over with it)
  int parent_went_on;

  void before() {
    counter = new counter_t;
    for (stack_t& s : stacks) s.init();
    workers[0] = {&stacks[0], &stacks[2]};
    workers[1] = {&stacks[1], &stacks[3]};
    parent_went_on = 0;
  }

  // The parent after its join: reads the results, frees d, b, a.
  void after_join() {
    RL_ASSERT(result_a($) == 1);
    RL_ASSERT(result_b($) == 2);
    pop(fd);
    pop(fb);
    pop(fa);
    ++parent_went_on;
  }

  // The parent's continuation, on worker w: call(b), make d, join.
  void continuation(worker_t& w) {
    pop(push(w.current));  // b runs: its child's frame on w's stack
    result_b($) = 2;
    fd = push(w.current);                              // a task the parent makes after the fork
    if (counter->pending() == 0) return after_join();  // a already back: no suspension
    if (mutant == 6) {
      const bool last = counter->parent_arrives();
      leave_strand(w);
      if (last) after_join();
      return;
    }
    if (mutant != 4) leave_strand(w);  // case (b)
    if (counter->parent_arrives()) after_join();
  }

  void thread(unsigned index) {
    worker_t& w = workers[index];
    if (index == 0) {
      fa = push(w.current);
      fb = push(w.current);
      counter->forked();
      slot.store(1, std::memory_order_release);  // the push of the continuation
      pop(push(w.current));                      // a runs: its own child
      result_a($) = 1;
      int expected = 1;
      if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        counter->joined_inline();  // case 1: the parent goes on here, as after a call
        continuation(w);
      } else {
        if (mutant == 2) {
          const bool last = counter->child_arrives();
          leave_strand(w);
          if (last) after_join();
        } else {
          if (mutant != 1) leave_strand(w);  // case (a)
          if (counter->child_arrives()) after_join();
        }
      }
    } else {
      int expected = 1;
      if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel, std::memory_order_relaxed))
        continuation(w);
    }
    other_work(w);
  }

  void after() {
    RL_ASSERT(parent_went_on == 1);
    RL_ASSERT(counter->pending() == 0);
    for (stack_t& s : stacks) {
      RL_ASSERT(s.top($) == 0);
      RL_ASSERT(s.recycled($) == s.abandoned($));
    }
    delete counter;
  }
};

struct suspend_test : rl::test_suite<suspend_test, 2> {
  relacy_atomics::atomic<int> waiting;  // the event's waiter: c, suspended
  stack_t stacks[4];
  worker_t workers[2];
  frame fx;  // c's local
  int c_finished;

  void before() {
    for (stack_t& s : stacks) s.init();
    workers[0] = {&stacks[0], &stacks[2]};
    workers[1] = {&stacks[1], &stacks[3]};
    c_finished = 0;
  }

  void take_and_resume() {
    if (waiting.exchange(0, std::memory_order_acq_rel) == 1) {
      pop(fx);  // c goes on: destroys x, finishes
      ++c_finished;
    }
  }

  void thread(unsigned index) {
    worker_t& w = workers[index];
    if (index == 0) {
      fx = push(w.current);
      if (mutant != 3 && mutant != 5) leave_strand(w);  // case (c), before the publication
      waiting.store(1, std::memory_order_release);      // c suspended on the event
      if (mutant == 5) leave_strand(w);
      other_work(w);
    }
    take_and_resume();  // the event set on thread 1, or thread 0 finding it set later
    other_work(w);
  }

  void after() {
    RL_ASSERT(c_finished == 1);
    for (stack_t& s : stacks) {
      RL_ASSERT(s.top($) == 0);
      RL_ASSERT(s.recycled($) == s.abandoned($));
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const rl::iteration_t iterations = pools::model::iterations_from(argc, argv, 100000);
  const bool steal_ok =
      pools::model::passes<steal_test>("a stolen parent and the stacks of frames", iterations);
  const bool suspend_ok =
      pools::model::passes<suspend_test>("a child suspends with frames on its stack", iterations);
  const char* const mutants[] = {"",
                                 "no abandonment when the parent was taken",
                                 "arrival before the abandonment",
                                 "no abandonment at a suspension",
                                 "no abandonment at a waiting join",
                                 "abandonment after the publication at a suspension",
                                 "abandonment after the arrival at a waiting join"};
  return pools::model::verdict("the stack-of-frames handover", mutant, mutants[mutant],
                               steal_ok && suspend_ok);
}
