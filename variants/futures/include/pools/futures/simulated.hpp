// SPDX-License-Identifier: MIT
// pools/futures/simulated.hpp — the futures pool's post and submit on pools::sim, and why its
// blocking get() cannot be (README, "A blocking wait cannot be simulated").
//
//   pools::sim::scheduler s(pools::sim::make_strategy("random"), seed);
//   pools::futures::simulated pool(s);
//   auto f = pool.submit([] { return 6 * 7; });
//   s.run();                  // every task, in the order the seed picks
//   int v = f.get();          // 42: outside the tasks, after the run
//
// Each post and submit is a task of its own ("post 1", "submit 2"). submit returns a
// simulated_future<R>, with std::future's get(), valid() and wait_for-free interface: get() outside
// a step (after, or before, the run) runs the simulation until the result is there; get() *inside*
// a task on a result that is not there yet throws pools::sim::blocking_wait_error, which stops the
// run with the reason: the task that would produce the result can only run on this one thread,
// after the step that waits for it — the nested-wait deadlock of a fixed pool, with one thread.
// A result already there is no wait: get() returns it, inside a task too. Whether it is there
// depends on the schedule, so such code fails under some seeds only — which the explorer finds.
#pragma once

#include <pools/sim/blocking_wait.hpp>
#include <pools/sim/scheduler.hpp>
#include <pools/unique_function.hpp>

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace pools::futures {

template <class R>
class simulated_future {
 public:
  simulated_future() = default;

  bool valid() const noexcept { return state_ != nullptr; }
  /// True when the task has finished (its result or exception is there).
  bool is_ready() const noexcept { return state_ != nullptr && state_->done; }

  /// The result (or the task's exception, rethrown). Inside a simulated task, on a result not yet
  /// there: pools::sim::blocking_wait_error. Outside: runs the simulation first.
  R get() {
    if (!state_)
      throw std::logic_error("pools::futures::simulated_future::get: no state (moved from, or got)");
    const std::shared_ptr<state> s = std::move(state_);
    if (!s->done) {
      if (s->sim->in_step()) pools::sim::throw_blocking_wait("std::future::get()");
      s->sim->run();
      if (!s->done)
        throw std::logic_error("pools::futures::simulated_future::get: the run ended without the result");
    }
    if (s->error) std::rethrow_exception(s->error);
    if constexpr (!std::is_void_v<R>) return std::move(*s->value);
  }

 private:
  template <class>
  friend class simulated_promise;
  friend class simulated;
  struct state {
    pools::sim::scheduler* sim = nullptr;
    bool done = false;
    std::exception_ptr error;
    std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> value;
  };
  explicit simulated_future(std::shared_ptr<state> s) : state_(std::move(s)) {}
  std::shared_ptr<state> state_;
};

class simulated {
 public:
  /// Runs this pool's tasks on `sim` (which must outlive it).
  explicit simulated(pools::sim::scheduler& sim) : sim_(&sim) {}

  /// One thread runs everything.
  std::size_t concurrency() const noexcept { return 1; }
  pools::sim::scheduler& sim() noexcept { return *sim_; }

  /// pools::Executor: f() runs once as a task of its own. Its exception stops the run.
  void post(pools::unique_function<void()> f) {
    sim_->ready(sim_->new_task("post " + std::to_string(++tasks_)), std::move(f));
  }

  /// f() runs once as a task of its own; the future holds its result or exception.
  template <class F>
  auto submit(F&& f) -> simulated_future<std::invoke_result_t<std::decay_t<F>&>> {
    using R = std::invoke_result_t<std::decay_t<F>&>;
    using state = typename simulated_future<R>::state;
    auto s = std::make_shared<state>();
    s->sim = sim_;
    sim_->ready(sim_->new_task("submit " + std::to_string(++tasks_)), [s, fn = std::forward<F>(f)]() mutable {
      try {
        if constexpr (std::is_void_v<R>) {
          fn();
          s->value.emplace(true);
        } else {
          s->value.emplace(fn());
        }
      } catch (const pools::sim::blocking_wait_error&) {
        throw;  // not the task's result: the run stops (see the header comment)
      } catch (...) {
        s->error = std::current_exception();
      }
      s->done = true;
    });
    return simulated_future<R>(std::move(s));
  }

 private:
  pools::sim::scheduler* sim_;
  std::size_t tasks_ = 0;
};

}  // namespace pools::futures
