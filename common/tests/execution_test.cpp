// SPDX-License-Identifier: MIT
// pools/execution.hpp: each of the four pools as a P2300 scheduler, driven by stdexec's own
// algorithms (schedule | then, when_all, continues_on / starts_on between two pools, sync_wait,
// exec::when_any, stop tokens), plus the two completions a healthy pool never sends: set_error
// (the pool refused the task) and set_stopped (stop was requested before the task ran).
#include <doctest/doctest.h>

#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/execution.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/futures/textbook_pool.hpp>
#include <pools/futures/thread_pool.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>

#include <atomic>
#include <chrono>
#include <exec/when_any.hpp>
#include <functional>
#include <latch>
#include <stdexcept>
#include <stdexec/execution.hpp>
#include <thread>
#include <vector>

namespace {

// Which executor a task runs under: set by `tagged` around each task it posts. Lets a test ask
// "did this continuation run on pool B?" without any pool exposing its threads.
thread_local int current_tag = 0;

template <pools::Executor E>
class tagged {
 public:
  tagged(E& ex, int tag) : ex_(&ex), tag_(tag) {}
  template <class F>
  void post(F&& f) {
    ex_->post([tag = tag_, f = std::forward<F>(f)]() mutable {
      const int saved = current_tag;
      current_tag = tag;
      f();
      current_tag = saved;
    });
  }
  std::size_t concurrency() const { return ex_->concurrency(); }

 private:
  E* ex_;
  int tag_;
};

// An executor whose post() throws, as a pool that is shutting down or out of memory does.
struct refusing_executor {
  template <class F>
  void post(F&&) {
    throw std::runtime_error("refusing_executor: no more tasks");
  }
  std::size_t concurrency() const { return 1; }
};

// A receiver whose stop token may already be triggered; it records which channel was called.
struct recording_receiver {
  using receiver_concept = stdexec::receiver_t;
  enum class channel { none, value, error, stopped };
  struct env {
    stdexec::inplace_stop_token token;
    auto query(stdexec::get_stop_token_t) const noexcept { return token; }
  };

  void set_value() && noexcept { finish(channel::value); }
  void set_error(std::exception_ptr) && noexcept { finish(channel::error); }
  void set_stopped() && noexcept { finish(channel::stopped); }
  env get_env() const noexcept { return {source->get_token()}; }

  void finish(channel c) {
    result->store(c);
    result->notify_all();
  }

  stdexec::inplace_stop_source* source;
  std::atomic<channel>* result;
};

recording_receiver::channel wait_for_channel(std::atomic<recording_receiver::channel>& r) {
  r.wait(recording_receiver::channel::none);
  return r.load();
}

}  // namespace

// The four variants' tuned pools, each with the constructor argument "threads".
#define POOLS_SCHEDULER_POOLS                                                              \
  pools::futures::thread_pool, pools::fibers::thread_pool, pools::coroutines::thread_pool, \
      pools::reactor::per_thread_executor

TEST_CASE_TEMPLATE("execution: schedule | then runs on the pool and sync_wait returns its value", Pool,
                   POOLS_SCHEDULER_POOLS) {
  Pool pool(2);
  auto sched = pools::as_scheduler(pool);
  static_assert(stdexec::scheduler<decltype(sched)>);
  CHECK(stdexec::get_forward_progress_guarantee(sched) == stdexec::forward_progress_guarantee::parallel);
  CHECK(sched == pools::as_scheduler(pool));

  const auto caller = std::this_thread::get_id();
  auto [result] = stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then([caller] {
                                       return std::pair{42, std::this_thread::get_id() != caller};
                                     }))
                      .value();
  auto [value, elsewhere] = result;
  CHECK(value == 42);
  CHECK(elsewhere);

  // The sender's environment names the scheduler it completes on.
  auto completes_on =
      stdexec::get_completion_scheduler<stdexec::set_value_t>(stdexec::get_env(stdexec::schedule(sched)));
  CHECK(completes_on == sched);
}

TEST_CASE_TEMPLATE("execution: when_all of senders on the pool runs each exactly once", Pool,
                   POOLS_SCHEDULER_POOLS) {
  Pool pool(2);
  auto sched = pools::as_scheduler(pool);
  std::atomic<int> runs{0};
  auto one = [&](int v) {
    return stdexec::schedule(sched) | stdexec::then([&runs, v] { return ++runs, v; });
  };
  for (int round = 0; round < 200; ++round) {
    auto [a, b, c, d] = stdexec::sync_wait(stdexec::when_all(one(1), one(2), one(3), one(4))).value();
    REQUIRE(a + b + c + d == 10);
  }
  CHECK(runs.load() == 800);
}

TEST_CASE_TEMPLATE("execution: continues_on and starts_on move work between two pools", Pool,
                   POOLS_SCHEDULER_POOLS) {
  // b_pool is declared first so that it is destroyed last: continues_on posts to b from a's
  // thread, and that post() may still be signalling b's condition variable after b's thread ran
  // the continuation and sync_wait returned. Destroying a first joins its thread, so the post has
  // returned before b is torn down (docs/std-execution.md, "Each pool as a scheduler").
  Pool b_pool(1);
  Pool a_pool(1);
  tagged<Pool> a(a_pool, 1), b(b_pool, 2);
  auto on_a = pools::as_scheduler(a);
  auto on_b = pools::as_scheduler(b);

  auto [tags] = stdexec::sync_wait(stdexec::schedule(on_a) | stdexec::then([] { return current_tag; }) |
                                   stdexec::continues_on(on_b) |
                                   stdexec::then([](int was) { return std::pair{was, current_tag}; }))
                    .value();
  auto [first, second] = tags;
  CHECK(first == 1);
  CHECK(second == 2);

  auto [started] = stdexec::sync_wait(
                       stdexec::starts_on(on_b, stdexec::just() | stdexec::then([] { return current_tag; })))
                       .value();
  CHECK(started == 2);
}

TEST_CASE_TEMPLATE("execution: an exception in then() reaches sync_wait", Pool, POOLS_SCHEDULER_POOLS) {
  Pool pool(2);
  auto sched = pools::as_scheduler(pool);
  CHECK_THROWS_WITH_AS(stdexec::sync_wait(stdexec::schedule(sched) | stdexec::then([]() -> int {
                                            throw std::logic_error("from the task");
                                          })),
                       "from the task", std::logic_error);
}

TEST_CASE_TEMPLATE("execution: exec::when_any runs one branch; the other, stopped before it ran, never does",
                   Pool, POOLS_SCHEDULER_POOLS) {
  // One thread, held busy until both branches are queued: whichever branch runs first completes
  // when_any, which requests stop; the other is then still queued and sees the stop request when
  // its turn comes (the operation reads the token on the pool's thread, not at start()).
  Pool pool(1);
  auto sched = pools::as_scheduler(pool);
  for (int round = 0; round < 20; ++round) {
    std::latch release(1);
    pool.post([&release] { release.wait(); });
    std::atomic<int> ran{0};
    auto branch = [&](int v) {
      return stdexec::schedule(sched) | stdexec::then([&ran, v] { return ++ran, v; });
    };
    std::thread releaser([&release] {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      release.count_down();
    });
    auto [winner] = stdexec::sync_wait(exec::when_any(branch(1), branch(2))).value();
    releaser.join();
    CHECK((winner == 1 || winner == 2));
    CHECK(ran.load() == 1);
  }
}

TEST_CASE_TEMPLATE("execution: a stop requested before the task runs completes it with set_stopped", Pool,
                   POOLS_SCHEDULER_POOLS) {
  Pool pool(1);
  stdexec::inplace_stop_source source;
  std::atomic result{recording_receiver::channel::none};
  source.request_stop();
  auto op =
      stdexec::connect(stdexec::schedule(pools::as_scheduler(pool)), recording_receiver{&source, &result});
  stdexec::start(op);
  CHECK(wait_for_channel(result) == recording_receiver::channel::stopped);

  // And without a stop request, the same receiver hears set_value.
  stdexec::inplace_stop_source quiet;
  std::atomic second{recording_receiver::channel::none};
  auto op2 =
      stdexec::connect(stdexec::schedule(pools::as_scheduler(pool)), recording_receiver{&quiet, &second});
  stdexec::start(op2);
  CHECK(wait_for_channel(second) == recording_receiver::channel::value);
}

TEST_CASE("execution: a pool that refuses the task completes the sender with set_error") {
  refusing_executor ex;
  stdexec::inplace_stop_source source;
  std::atomic result{recording_receiver::channel::none};
  auto op =
      stdexec::connect(stdexec::schedule(pools::as_scheduler(ex)), recording_receiver{&source, &result});
  stdexec::start(op);
  CHECK(wait_for_channel(result) == recording_receiver::channel::error);
  CHECK_THROWS_WITH_AS(stdexec::sync_wait(stdexec::schedule(pools::as_scheduler(ex))),
                       "refusing_executor: no more tasks", std::runtime_error);
}

// Anything that satisfies pools::Executor is a scheduler through the same adapter: the textbook
// pools (and a student's pool) get std::execution without a line of their own.
TEST_CASE_TEMPLATE("execution: the textbook pools are schedulers too", Pool, pools::futures::textbook_pool,
                   pools::fibers::textbook_pool, pools::coroutines::textbook_pool,
                   pools::reactor::textbook_pool) {
  Pool pool(2);
  std::atomic<int> runs{0};
  auto one = [&](int v) {
    return stdexec::schedule(pools::as_scheduler(pool)) | stdexec::then([&runs, v] { return ++runs, v; });
  };
  auto [sum] = stdexec::sync_wait(stdexec::when_all(one(20), one(22)) | stdexec::then(std::plus<>{})).value();
  CHECK(sum == 42);
  CHECK(runs.load() == 2);
}
