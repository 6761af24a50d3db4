// SPDX-License-Identifier: MIT
// thread_pool with a park hook (pools/park_hook.hpp): idle workers wait in the hook, run its
// foreign work on their own thread, and the pool's own behaviour does not change.
#include <doctest/doctest.h>

#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/testing/queue_park_hook.hpp>
#include <pools/wait_group.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <coroutine>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using pools::coroutines::task;
using pools::coroutines::thread_pool;
using pools::testing::queue_park_hook;

namespace {

// "Start an I/O operation": the completion arrives as foreign work on worker 0 and resumes the
// coroutine there, as a socket completion does in the server.
struct via_hook {
  queue_park_hook& hook;
  thread_pool& pool;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const {
    hook.post(0, [&pool = pool, h] { pool.enqueue(h); });
  }
  void await_resume() const noexcept {}
};

// The same, recording the order in which completions were started and coroutines resumed.
struct via_hook_in_order {
  queue_park_hook& hook;
  thread_pool& pool;
  std::vector<int>& started;
  int id;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const {
    started.push_back(id);  // one worker: no other thread touches the vectors
    hook.post(0, [&pool = pool, h] { pool.enqueue(h); });
  }
  void await_resume() const noexcept {}
};

task<void> one_read(queue_park_hook& hook, thread_pool& pool, std::vector<int>& started,
                    std::vector<int>& resumed, int id) {
  co_await via_hook_in_order{hook, pool, started, id};
  resumed.push_back(id);
}

task<int> round_trips(queue_park_hook& hook, thread_pool& pool, int n) {
  int done = 0;
  for (int i = 0; i < n; ++i) {
    co_await via_hook{hook, pool};
    ++done;
  }
  co_return done;
}

// Steps of the one worker (a connection resumed, a job started) and the longest wait of a job.
struct starvation_probe {
  std::uint64_t step = 0, worst = 0, jobs = 0;  // one worker: only its thread touches them
};

// A job: it starts, then waits as /sleep does (here for a completion of the hook, not a timer, so
// that no clock is involved) and ends.
task<void> probe_job(queue_park_hook& hook, thread_pool& pool, starvation_probe& p,
                     std::uint64_t spawned_at) {
  p.worst = std::max(p.worst, ++p.step - spawned_at);
  co_await via_hook{hook, pool};
  ++p.jobs;
}

// A connection: a read completes through the hook, its request's job is spawned, the next read.
task<void> probe_connection(queue_park_hook& hook, thread_pool& pool, starvation_probe& p, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    co_await via_hook{hook, pool};
    pool.spawn(probe_job(hook, pool, p, ++p.step));
  }
}

}  // namespace

TEST_CASE("park hook: every task runs; idle workers park in the hook and are woken through it") {
  queue_park_hook hook(2);
  std::atomic<int> ran{0};
  {
    thread_pool pool(2, hook);
    pools::testing::post_in_rounds_until_parked(pool, hook, ran);
  }
  CHECK(ran.load() == 10'500);
  CHECK(hook.parks.load() > 0);
  CHECK(hook.wakes.load() > 0);
  CHECK(hook.one_thread_per_index(std::this_thread::get_id()));  // index i is worker i's thread
}

TEST_CASE("park hook: foreign work resumes coroutines on the worker that ran it, 2,000 times") {
  queue_park_hook hook(1);
  thread_pool pool(1, hook);
  CHECK(pools::coroutines::sync_wait(pool, round_trips(hook, pool, 2000)) == 2000);
  CHECK(hook.ran.load() == 2000);
}

// The server's 64 connections on one worker: one poll of the event loop resumes many of them.
// They must run oldest first. On the LIFO deque the newest ran first, and every between-task poll
// put newer ones on top of the oldest again (a /plaintext p99 of 3 ms: pools/ready_fifo.hpp).
TEST_CASE("park hook: coroutines resumed by the hook's completions run in completion order") {
  queue_park_hook hook(1);
  thread_pool pool(1, hook);
  std::vector<int> started, resumed;
  started.reserve(200);
  resumed.reserve(200);
  pools::coroutines::sync_wait(pool, [&]() -> task<void> {
    std::vector<task<void>> reads;
    for (int id = 0; id < 200; ++id) reads.push_back(one_read(hook, pool, started, resumed, id));
    co_await pools::coroutines::when_all(std::move(reads));
  }());
  REQUIRE(started.size() == 200);
  CHECK(resumed == started);  // the hook runs completions in the order they were posted
}

// Only *resumptions* go to the FIFO, which other workers cannot steal from. New work started
// from a completion (a listener on a worker's event loop spawning a connection) must still be
// stealable: here worker 0 stays inside the completion, so only worker 1 can run the post.
TEST_CASE("park hook: a task posted from the hook's completion can be stolen by another worker") {
  queue_park_hook hook(2);
  thread_pool pool(2, hook);
  CHECK(pools::testing::posted_from_completion_ran_elsewhere(pool, hook));
}

TEST_CASE("park hook: foreign work posted from outside wakes a parked worker") {
  queue_park_hook hook(2);
  thread_pool pool(2, hook);
  std::this_thread::sleep_for(20ms);  // both workers parked in the hook
  std::atomic<int> on_workers{0};
  pools::wait_group wg(2);
  for (unsigned i = 0; i < 2; ++i) {
    hook.post(i, [&] {
      if (pool.on_worker_thread()) on_workers.fetch_add(1);
      wg.done();
    });
  }
  CHECK(wg.wait_for(5s));
  CHECK(on_workers.load() == 2);
}

// The server's /sleep on one worker under more load than it can serve (server/README.md, "The
// /sleep tail"): each completion the hook runs resumes a connection, which starts a job (spawn:
// onto the deque) and starts its next I/O at once. Completions keep arriving, so the ready FIFO
// never runs dry while the connections run. A job must still start within a bounded number of
// steps of its spawn. When the FIFO always went first and the fairness tick took the deque's
// newest item, the first jobs spawned waited for the whole run (about connections x rounds steps,
// 10,000 here): the server's p99 of a second and more. Counted in steps, not time, so the
// machine's load does not change the answer.
TEST_CASE("park hook: jobs spawned under an endless stream of completions are not starved") {
  constexpr int connections = 200, rounds = 50;
  starvation_probe probe;
  {
    queue_park_hook hook(1);
    thread_pool pool(1, hook);
    pools::coroutines::sync_wait(
        pool, [](queue_park_hook& hook, thread_pool& pool, starvation_probe& probe) -> task<void> {
          std::vector<task<void>> all;
          all.reserve(connections);
          for (int c = 0; c < connections; ++c) all.push_back(probe_connection(hook, pool, probe, rounds));
          co_await pools::coroutines::when_all(std::move(all));
        }(hook, pool, probe));
  }  // the pool drains: every job has run
  CHECK(probe.jobs == std::uint64_t{connections} * rounds);
  INFO("the longest a job waited: " << probe.worst << " steps");
  CHECK(probe.worst < 1000);
}

TEST_CASE("park hook: a sleeping coroutine wakes at its deadline (the hook parks with a timeout)") {
  queue_park_hook hook(1);
  thread_pool pool(1, hook);
  const auto start = std::chrono::steady_clock::now();
  pools::coroutines::sync_wait(
      pool, [](thread_pool& p) -> task<void> { co_await pools::coroutines::sleep_for(p, 30ms); }(pool));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 30ms);
  CHECK(took < 2s);
}
