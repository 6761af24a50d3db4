// SPDX-License-Identifier: MIT
// pools/coroutines/simulated.hpp — the coroutine pool's user code on pools::sim: one thread, one
// seed, one schedule (docs/testing-schedules.md).
//
//   pools::sim::explore({.runs = 1000, .strategy = "pct:2"}, [](pools::sim::scheduler& s) {
//     pools::coroutines::simulated pool(s);
//     int v = pool.run(my_program(pool));   // where the program would call sync_wait(pool, ...)
//   });
//
// THE SEAM. task<T>, when_all, async_event, async_latch, async_mutex and channel never name a
// pool: they reach "the pool this coroutine runs on" through scheduler::enqueue and
// current_scheduler() (scheduler.hpp). `simulated` is one more scheduler: enqueue(h) does not push
// h onto a queue for some thread, it hands the pools::sim scheduler a step — "resume h" — and
// the seed decides when that step runs. So the primitives run unchanged; so does user code
// written against its pool as a template parameter or `auto&` (schedule(), spawn(), post(),
// sleep_for(pool, d)), the way the examples and tests are written.
//
// WHICH TASK A STEP BELONGS TO (what the strategy chooses between, what the trace draws):
//   run(t) and spawn(t) start a task; post(f) too;
//   a coroutine that waits on a primitive (capture(), detail/resumer.hpp) is the task it ran in,
//   and the enqueue that wakes it makes that task ready again;
//   co_await pool.schedule() (a yield) and sleep_for are the task that awaits them;
//   any other enqueue — when_all forking a child — starts a new task, named after its parent
//   ("main.1", "main.2").
//
// SCHEDULING POINTS (pools/sim/scheduler.hpp says what they are and why): a step ends where its
// coroutine waits, yields or sleeps, and before every co_await on a primitive — an async_mutex
// lock, a channel send or receive, an async_event or async_latch wait — whether it would have to
// wait or not. The awaiter's await_ready answers false here and its await_suspend hands the
// operation to defer(): the step ends ("yields before async_mutex lock"), and the task's next
// step performs it, then either goes on into the code after the co_await ("async_mutex lock went
// through") or leaves the task waiting ("waits on async_mutex"). So another task may run between
// an unlock() and the next lock(), as another thread may on a pool, and a check made under one
// lock and acted on under the next is found stale by some seed. The calls that do not co_await —
// unlock(), try_lock(), set(), count_down(), close() — cannot be points: a coroutine is suspended
// only at a co_await. They take effect in the step that makes them; a bug that needs another task
// to run between two of them with no co_await between (an unlock() then a set()) is not found
// here (the fiber adapter, whose every call may switch, has a point before each).
//
// TIME. sleep_for(pool, d) and sleep_until(pool, t) are timers on the virtual clock
// (pools::sim::virtual_clock): a 30-second sleep takes no wall time.
//
// FAILURES are stricter than on the pools: an exception escaping a spawned or posted task stops
// the run (the pools report it to pools::report_unhandled_exception and go on), so a test sees it.
// run(t) rethrows t's exception. When the run ends with run()'s task unfinished, it throws
// pools::sim::deadlock_error naming each waiting task and what it waits on ("async_mutex 0x...").
//
// NOT SIMULATED: sync_wait (it would block the only thread; use run()), and blocking calls inside
// a task (a std::mutex held across a co_await, a std::future::get()): they block the one thread
// every task runs on.
#pragma once

#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/sim/scheduler.hpp>
#include <pools/sim/virtual_clock.hpp>
#include <pools/unique_function.hpp>

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pools::coroutines {

class simulated final : public scheduler {
 public:
  /// Runs this pool's coroutines on `sim` (which must outlive it).
  explicit simulated(pools::sim::scheduler& sim);
  simulated(const simulated&) = delete;
  simulated& operator=(const simulated&) = delete;
  /// Destroys the frames of started tasks that never finished (a failed or deadlocked run).
  ~simulated();

  /// One thread runs everything.
  std::size_t concurrency() const noexcept { return 1; }
  pools::sim::scheduler& sim() noexcept { return *sim_; }

  /// Runs `t` as the task `name` and every task it starts, until nothing can run; returns t's
  /// result or rethrows its exception (or the first exception of a spawned or posted task).
  /// Throws pools::sim::deadlock_error when t cannot finish.
  template <class T>
  T run(task<T> t, const std::string& name = "main") {
    if (!t.valid()) throw std::invalid_argument("pools::coroutines::simulated::run: empty task");
    start(observe(t.handle()), name);
    run_to_end();
    if (!t.is_ready()) throw_unfinished();
    return t.handle().promise().take_result();
  }

  /// Runs `t` detached as the task `name` (default "spawn <n>").
  template <class T>
  void spawn(task<T> t, std::string name = {}) {
    if (!t.valid()) throw std::invalid_argument("pools::coroutines::simulated::spawn: empty task");
    start(own(std::move(t)), name.empty() ? "spawn " + std::to_string(++spawned_) : std::move(name));
  }

  /// pools::Executor: f() runs once as a task of its own ("post <n>").
  void post(pools::unique_function<void()> f);

  /// `co_await pool.schedule()`: a yield — the task goes back among the ready ones.
  struct schedule_awaiter {
    simulated& pool;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const { pool.yield(h); }
    void await_resume() const noexcept {}
  };
  schedule_awaiter schedule() noexcept { return {*this}; }

  /// The task's coroutine `h` runs again at `deadline` (virtual time).
  void add_timer(pools::sim::virtual_clock::time_point deadline, std::coroutine_handle<> h);

  // scheduler: the seam (see THE SEAM above).
  void enqueue(std::coroutine_handle<> h) override;
  void wait_begins(std::coroutine_handle<> h, const char* what, const void* object) noexcept override;
  bool wait_cancelled(std::coroutine_handle<> h) noexcept override;
  void defer(std::coroutine_handle<> h, const char* operation,
             pools::unique_function<bool()> attempt) override;

 private:
  // A started task's outermost coroutine: it resumes nobody at its end; it tells this pool.
  struct root {
    struct promise_type : recycled_frame {
      simulated* pool = nullptr;
      std::size_t index = 0;  // in roots_
      root get_return_object() noexcept { return {std::coroutine_handle<promise_type>::from_promise(*this)}; }
      std::suspend_always initial_suspend() const noexcept { return {}; }
      struct final_awaiter {
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
          simulated* p = self.promise().pool;
          p->roots_[self.promise().index] = {};
          p->sim_->annotate("finishes");
          self.destroy();
        }
        void await_resume() const noexcept {}
      };
      final_awaiter final_suspend() const noexcept { return {}; }
      void return_void() noexcept {}
      void unhandled_exception() noexcept { pool->fail(std::current_exception()); }
    };
    std::coroutine_handle<promise_type> handle;
  };

  // run(): the caller keeps the task (and takes its result); the root only drives it to its end.
  template <class T>
  static root observe(std::coroutine_handle<detail::task_promise<T>> h) {
    struct completion {
      std::coroutine_handle<detail::task_promise<T>> h;
      bool await_ready() const noexcept { return h.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) const noexcept {
        h.promise().set_continuation(awaiting);
        return h;
      }
      void await_resume() const noexcept {}
    };
    co_await completion{h};
  }
  // spawn(): the root owns the task; its exception fails the run.
  template <class T>
  static root own(task<T> t) {
    co_await std::move(t);
  }
  static root call(pools::unique_function<void()> f);

  void start(root r, std::string name);
  void yield(std::coroutine_handle<> h);
  void ready(pools::sim::task_id t, std::coroutine_handle<> h);
  void step(std::coroutine_handle<> h);  // one step: resume h as a coroutine of this pool
  // One step after a scheduling point: the deferred operation, then h unless it suspended h.
  void attempt_step(std::coroutine_handle<> h, const char* operation,
                    pools::unique_function<bool()>& attempt);
  void end_step();  // what both kinds of step do last
  void run_to_end();
  void fail(std::exception_ptr e) noexcept;
  [[noreturn]] void throw_unfinished() const;

  struct pending_wait {
    pools::sim::task_id task = 0;
    std::string what;  // "async_mutex 0x..." (the deadlock report)
    std::string kind;  // "async_mutex" (the printed schedule: the same in every process)
  };

  pools::sim::scheduler* sim_;
  std::vector<std::coroutine_handle<root::promise_type>> roots_;  // started; null once finished
  std::map<void*, pending_wait> pending_;             // waits begun in this step (may still be cancelled)
  std::map<void*, pools::sim::task_id> waiting_;      // suspended on a primitive: whose task
  std::map<pools::sim::task_id, std::size_t> forks_;  // children forked per task, for names
  std::exception_ptr failure_;                        // the first exception of a spawned or posted task
  void* attempting_ = nullptr;                        // the coroutine whose deferred operation runs now
  std::size_t spawned_ = 0;
  std::size_t posted_ = 0;
};

/// Resumes the awaiting coroutine at `deadline` on the virtual clock (a timer of the simulation).
class sim_sleep_awaiter {
 public:
  sim_sleep_awaiter(simulated& pool, pools::sim::virtual_clock::time_point deadline) noexcept
      : pool_(&pool), deadline_(deadline) {}
  bool await_ready() const { return pool_->sim().now() >= deadline_; }
  void await_suspend(std::coroutine_handle<> h) const { pool_->add_timer(deadline_, h); }
  void await_resume() const noexcept {}

 private:
  simulated* pool_;
  pools::sim::virtual_clock::time_point deadline_;
};

/// sleep.hpp's sleep_until and sleep_for, for the simulated pool: virtual time.
inline sim_sleep_awaiter sleep_until(simulated& pool, pools::sim::virtual_clock::time_point deadline) {
  return {pool, deadline};
}
template <class Rep, class Period>
sim_sleep_awaiter sleep_for(simulated& pool, std::chrono::duration<Rep, Period> delay) {
  return {pool, pool.sim().now() + std::chrono::ceil<pools::sim::virtual_clock::duration>(delay)};
}

}  // namespace pools::coroutines
