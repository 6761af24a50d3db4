// SPDX-License-Identifier: MIT
// pools/fibers/simulated.hpp — the fiber pool's user code on pools::sim: one thread, one seed,
// one schedule (docs/testing-schedules.md).
//
//   pools::sim::explore({.runs = 1000, .strategy = "pct:2"}, [](pools::sim::scheduler& s) {
//     pools::fibers::simulated pool(s);
//     int v = pool.run([&pool] { return my_program(pool); });   // as thread_pool::run
//   });
//
// THE SEAM. The fiber primitives (mutex, condition_variable, channel, latch, wait_group, future,
// join, this_fiber::yield and sleep) never name a pool: they wait through the fiber scheduler's
// entry points (detail/waiter.hpp: park, wake; detail/runtime.hpp). `simulated` runs a fiber
// scheduler made with a *simulation* (src/scheduler.hpp): it has no worker threads, and wherever
// a fiber would be queued — a spawn, a wake, a yield — the item goes to the pools::sim scheduler
// as a step instead, and the seed decides when it runs. A step switches to the fiber, on the
// simulator's thread, until it waits, yields or ends. So the primitives run unchanged; so does
// user code written against its pool as a template parameter or `auto&` (spawn(), post(), run(),
// join_handle::join()), the way the examples and tests are written.
//
// WHICH TASK A STEP BELONGS TO (what the strategy chooses between, what the trace draws): each
// spawned or posted fiber is a task — run(f) is "main", spawn(f) from a fiber named X is "X.1",
// "X.2", ..., from outside the fibers "fiber 1", ...; post(f) is "post 1", .... A fiber's steps
// are its stretches between scheduling points (below): a wait on a primitive (its task then
// waits on it: the deadlock report says on what, "mutex 0x...", "join of task 2 \"main.1\""), a
// yield, a sleep, the point before a primitive's operation. join()
// always waits for the child's own task: on a pool it may run a child nobody started inline,
// which is one of the schedules the seeds explore (the child runs right after the join waits).
//
// WHERE FIBERS CAN INTERLEAVE (the scheduling points, pools/sim/scheduler.hpp says why): where a
// fiber waits, yields or sleeps, and before every operation of a primitive — mutex lock, try_lock
// and unlock; condition_variable notify and wait; channel send, recv, their try_ forms, close and
// is_closed; latch and wait_group operations; a promise set or destroyed, a future's wait and
// is_ready; a join — whether it has to wait or not. Each operation starts with
// detail::sync_point() (detail/waiter.hpp): on a simulated fiber the step ends there ("yields
// before mutex unlock") and the fiber's next step performs the operation. So another fiber may
// run between an unlock() and the next lock(), as another worker may on a pool, and a check made
// under one lock and acted on under the next is found stale by some seed. Between two points the
// code runs as one step: a data race (memory shared without a primitive) is ThreadSanitizer's to
// find, not the simulator's. A fiber that spins without touching a primitive never ends its step:
// the run never ends either (the step limit counts steps, not loops).
//
// TIME. sleep_for(d), condition_variable::wait_for(d), future::wait_for(d) and the waits until a
// deadline computed from their own clock (pools::fibers::detail::clock_now(), the virtual time
// mapped onto std::chrono::steady_clock) are timers of the virtual clock: a 30-second timeout
// takes 30 virtual seconds and no wall time, the same on every run. A deadline user code computes
// from std::chrono::steady_clock::now() itself lands where the real time since the pool's
// construction puts it: still virtual, but not the same on every run.
//
// FAILURES. An exception escaping a posted fiber (or a spawned one whose handle was detached)
// stops the run (after being reported to pools::report_unhandled_exception, as on the pools), so
// a test sees it; one escaping a joined fiber is rethrown by join(), as on the pools. When
// run(f)'s fiber cannot finish, run() throws pools::sim::deadlock_error naming each waiting
// fiber's task and what it waits on. Out of memory anywhere in the run — the simulator's
// bookkeeping, a spawn, a timer, a new fiber's stack — stops it with std::bad_alloc (on a real
// pool a worker that cannot create a fiber ends the process: it has no caller; a simulated step
// has one). tests/faults/simulated_alloc_failure_test.cpp fails each allocation of a run once.
//
// AFTER A FAILED RUN the fibers still waiting are never resumed: the pool frees their stacks
// without unwinding them, so what lives on those stacks is not destroyed (a std::string there
// leaks; an object there that another holds a pointer to is gone). The tasks of those fibers
// (their callables, their results) are destroyed. The simulator must outlive the pool, and its
// run() is not called again after the pool is gone.
//
// NOT SIMULATED: blocking calls inside a fiber (a std::mutex held across a wait, a
// std::future::get(), this_thread::sleep_for): they block the one thread every fiber runs on.
#pragma once

#include <pools/fibers/detail/stop_scope.hpp>
#include <pools/fibers/detail/task.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/fibers/stack_pool.hpp>
#include <pools/sim/scheduler.hpp>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <type_traits>
#include <utility>

namespace pools::fibers {

namespace detail {
class scheduler;
class simulation_adapter;  // src/simulated.cpp
}  // namespace detail

class simulated {
 public:
  /// Runs this pool's fibers on `sim` (which must outlive it), on stacks of `stack`.
  explicit simulated(pools::sim::scheduler& sim, const stack_options& stack = {});
  simulated(const simulated&) = delete;
  simulated& operator=(const simulated&) = delete;
  /// Ends the idle fibers; after a failed run, frees the stuck ones (see AFTER A FAILED RUN).
  ~simulated();

  /// One thread runs everything.
  std::size_t concurrency() const noexcept { return 1; }
  pools::sim::scheduler& sim() noexcept { return *sim_; }

  /// Starts f() as a fiber: a task of the simulation named `name` (see above for the default).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto spawn(F&& f, const std::string& name = {}) -> join_handle<std::invoke_result_t<std::decay_t<F>>> {
    using R = std::invoke_result_t<std::decay_t<F>>;
    auto* t = new detail::task<std::decay_t<F>, R, true>(scheduler(), true, std::forward<F>(f));
    start(t, name, false);
    return join_handle<R>(t);
  }

  /// spawn(f, name) under `token` (this_fiber.hpp: the fiber's stop token).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto spawn(std::stop_token token, F&& f, const std::string& name = {})
      -> join_handle<std::invoke_result_t<std::decay_t<F>>> {
    return spawn(detail::stop_scope<std::decay_t<F>>{std::move(token), std::forward<F>(f)}, name);
  }

  /// pools::Executor: f() runs once as a detached fiber ("post <n>").
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>&>
  void post(F&& f) {
    start(new detail::task<std::decay_t<F>, void, false>(scheduler(), false, std::forward<F>(f)), {}, true);
  }

  /// Runs f() as the fiber `name` and every fiber it starts, until nothing can run; returns f's
  /// result or rethrows its exception. Throws pools::sim::deadlock_error when f cannot finish,
  /// and what stopped the run when something did (see FAILURES).
  template <class F>
    requires std::is_invocable_v<std::decay_t<F>>
  auto run(F&& f, const std::string& name = "main") -> std::invoke_result_t<std::decay_t<F>> {
    using R = std::invoke_result_t<std::decay_t<F>>;
    auto* t = new detail::task<std::decay_t<F>, R, true>(scheduler(), true, std::forward<F>(f));
    start(t, name, false);
    // The handle's reference stays with t until t is done: a handle joined after a failed run
    // would wait for ever (the pool destroys an unfinished task instead, ~simulated).
    run_to_end(*t);
    return join_handle<R>(t).join();
  }

 private:
  detail::scheduler& scheduler() noexcept;
  // Hands t to the simulation as a new task (the pool keeps a reference until it is destroyed).
  void start(detail::task_base* t, const std::string& name, bool posted);
  // sim.run(); throws deadlock_error when t is not done after it (and drops t's handle reference
  // when the run throws while t is done).
  void run_to_end(detail::task_base& t);

  pools::sim::scheduler* sim_;
  std::unique_ptr<detail::simulation_adapter> adapter_;
};

}  // namespace pools::fibers
