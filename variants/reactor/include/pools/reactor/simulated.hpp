// SPDX-License-Identifier: MIT
// pools/reactor/simulated.hpp — the reactor's user code on pools::sim: posts, strands and timers
// run on one thread in the order a seed picks, timers in virtual time (docs/testing-schedules.md).
//
//   pools::sim::scheduler s(pools::sim::make_strategy("random"), seed);
//   pools::reactor::simulated ex(s);
//   auto strand = make_strand(ex);
//   post(strand, [] { ... });                 // as boost::asio::post(strand, f) on the real reactor
//   post_after(ex, 30s, [] { ... });          // a timer on the virtual clock
//   ex.post([] { ... });
//   s.run();
//
// THE SEAM is overloads, found by argument-dependent lookup: code written once against "an
// executor" as a template parameter calls ex.post(f), make_strand(ex), post(strand, f) unqualified
// (boost::asio::post for an asio strand, the overload below for a simulated one), post_after(ex,
// d, f) and post_at(ex, t, f), and handle.cancel(). On the real reactor those are Asio and
// pools/reactor/timer.hpp; here each becomes steps of pools::sim tasks:
//   ex.post(f)            a task of its own ("post 3"): free to run before or after anything
//   a strand              ONE task ("strand 1"): its handlers are that task's steps, which the
//                         simulator runs in the order they were posted and never two at once;
//                         between two of them any other task may run. A strand's order is kept,
//                         everything else is free: what a strand promises, no more.
//   post_after / post_at  a task of its own ("timer 2"), ready when the virtual clock reaches the
//                         deadline; cancel() before that removes it (true), after it false.
// An exception escaping a handler stops the run (the real reactor reports it and goes on), so a
// test sees it. Sockets and I/O objects are not simulated.
#pragma once

#include <pools/sim/scheduler.hpp>
#include <pools/sim/virtual_clock.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace pools::reactor {

class simulated {
 public:
  /// Runs this executor's handlers on `sim` (which must outlive it).
  explicit simulated(pools::sim::scheduler& sim) noexcept : sim_(&sim) {}

  /// One thread runs everything.
  std::size_t concurrency() const noexcept { return 1; }
  pools::sim::scheduler& sim() noexcept { return *sim_; }

  /// pools::Executor: f() runs once, as a task of its own.
  template <class F>
  void post(F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "post: f must be callable as f()");
    sim_->ready(sim_->new_task(next_name("post")), std::forward<F>(f));
  }

  /// A name for the next task ("post 1", "strand 2", "timer 3").
  std::string next_name(const char* kind) {
    std::string name(kind);  // appended, not "a" + b: GCC 12 warns falsely (-Wrestrict) on that
    name += ' ';
    name += std::to_string(++named_);
    return name;
  }

 private:
  pools::sim::scheduler* sim_;
  std::size_t named_ = 0;
};

/// A strand on the simulator: one task whose steps are the handlers posted to it.
class simulated_strand {
 public:
  simulated_strand(pools::sim::scheduler& sim, pools::sim::task_id task) noexcept : sim_(&sim), task_(task) {}
  pools::sim::scheduler& sim() const noexcept { return *sim_; }
  pools::sim::task_id task() const noexcept { return task_; }
  friend bool operator==(const simulated_strand& a, const simulated_strand& b) noexcept {
    return a.sim_ == b.sim_ && a.task_ == b.task_;
  }

 private:
  pools::sim::scheduler* sim_;
  pools::sim::task_id task_;
};

/// make_strand(ex) of pools/reactor/strand.hpp, for the simulator.
inline simulated_strand make_strand(simulated& ex) {
  return {ex.sim(), ex.sim().new_task(ex.next_name("strand"))};
}

/// boost::asio::post(strand, f)'s place for a simulated strand: f runs after the handlers posted
/// to the strand before it, never at the same time as another of them.
template <class F>
void post(const simulated_strand& strand, F&& f) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "post: f must be callable as f()");
  strand.sim().ready(strand.task(), std::forward<F>(f));
}

/// timer_handle of pools/reactor/timer.hpp, for the simulator.
class simulated_timer_handle {
 public:
  simulated_timer_handle() = default;

  /// True if this call kept the task from running (it had not run and was not cancelled).
  bool cancel() {
    if (!state_ || state_->phase != state::pending) return false;
    state_->phase = state::cancelled;
    return state_->sim->cancel(state_->id);
  }
  /// True while the task is scheduled and neither run nor cancelled.
  bool pending() const noexcept { return state_ && state_->phase == state::pending; }

 private:
  struct state {
    enum : int { pending, fired, cancelled };
    pools::sim::scheduler* sim = nullptr;
    pools::sim::scheduler::timer_id id = 0;
    int phase = pending;
  };
  template <class F>
  friend simulated_timer_handle post_at(simulated& ex, pools::sim::virtual_clock::time_point when, F&& f);
  std::shared_ptr<state> state_;
};

/// Runs f() when the virtual clock reaches `when`, unless cancelled: a task of its own.
template <class F>
simulated_timer_handle post_at(simulated& ex, pools::sim::virtual_clock::time_point when, F&& f) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "post_at: f must be callable as f()");
  simulated_timer_handle handle;
  handle.state_ = std::make_shared<simulated_timer_handle::state>();
  handle.state_->sim = &ex.sim();
  handle.state_->id = ex.sim().at(when, ex.sim().new_task(ex.next_name("timer")),
                                  [s = handle.state_, f = std::forward<F>(f)]() mutable {
                                    s->phase = simulated_timer_handle::state::fired;
                                    f();
                                  });
  return handle;
}

/// Runs f() after `delay` of virtual time, unless cancelled.
template <class Rep, class Period, class F>
simulated_timer_handle post_after(simulated& ex, std::chrono::duration<Rep, Period> delay, F&& f) {
  return post_at(ex, ex.sim().now() + std::chrono::ceil<pools::sim::virtual_clock::duration>(delay),
                 std::forward<F>(f));
}

}  // namespace pools::reactor
