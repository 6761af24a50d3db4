// SPDX-License-Identifier: MIT
// Bounded submission (back-pressure) on the work-stealing pool: set_capacity, try_post and
// try_spawn that say no when the queue is full, a blocking post from a foreign thread that waits
// for room, spawn_when_room that suspends a coroutine instead, and the destructor ending every
// wait with pool_closed. Every task is counted: what was accepted ran exactly once, what was
// refused or closed never ran, and nothing it carried is left alive.
#include <doctest/doctest.h>

#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <semaphore>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;
using coro_test::lifetime_probe;

namespace {

constexpr auto patience = 10s;

/// Waits until pred() holds, at most `patience`; a bounded wait turns a bug into a failed check.
template <class Pred>
bool eventually(Pred pred) {
  const auto end = std::chrono::steady_clock::now() + patience;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// Occupies one worker until release(), so what is queued after it stays queued. Posted before
/// the capacity is set, so it takes no place. The state is shared with the task: a test that
/// fails early leaves nothing dangling (the gate also opens by itself after `patience`).
struct held_worker {
  struct state {
    std::latch started{1};
    std::binary_semaphore gate{0};
  };
  explicit held_worker(pc::thread_pool& pool) {
    pool.post([s = shared] {
      s->started.count_down();
      (void)s->gate.try_acquire_for(patience);
    });
    REQUIRE(eventually([&] { return shared->started.try_wait(); }));
  }
  ~held_worker() { release(); }
  held_worker(const held_worker&) = delete;
  held_worker& operator=(const held_worker&) = delete;
  void release() {
    if (!released) shared->gate.release();
    released = true;
  }
  std::shared_ptr<state> shared = std::make_shared<state>();
  bool released = false;
};

pc::task<void> count_up(std::atomic<int>& runs, int by = 1) {
  runs.fetch_add(by);
  co_return;
}

pc::task<void> probed(std::atomic<int>& runs, lifetime_probe) {
  runs.fetch_add(1);
  co_return;
}

}  // namespace

TEST_CASE("bounded: an unbounded pool (the default) always accepts and counts no places") {
  std::atomic<int> runs{0};
  {
    pc::thread_pool pool(1);
    CHECK(pool.capacity() == 0);
    for (int i = 0; i < 100; ++i) CHECK(pool.try_post([&] { runs.fetch_add(1); }));
    for (int i = 0; i < 100; ++i) CHECK(pool.try_spawn(count_up(runs)));
    CHECK(pool.queued() == 0);
    CHECK(pool.stats().refused == 0);
  }
  CHECK(runs.load() == 200);
}

TEST_CASE("bounded: try_post and try_spawn say no when the queue is full, counted in stats().refused") {
  std::atomic<int> runs{0};
  {
    pc::thread_pool pool(1);
    held_worker held(pool);
    pool.set_capacity(2);
    CHECK(pool.capacity() == 2);
    CHECK(pool.try_post([&] { runs.fetch_add(1); }));
    CHECK(pool.try_spawn(count_up(runs, 10)));
    CHECK(pool.queued() == 2);
    CHECK_FALSE(pool.try_post([&] { runs.fetch_add(100); }));
    pc::task<void> refused = count_up(runs, 1000);
    CHECK_FALSE(pool.try_spawn(std::move(refused)));
    CHECK(refused.valid());  // NOLINT(bugprone-use-after-move): a refused task stays the caller's, unrun
    CHECK(pool.stats().refused == 2);
    CHECK(pool.queued() == 2);
    held.release();
    REQUIRE(eventually([&] { return runs.load() == 11; }));
    CHECK(pool.queued() == 0);
    CHECK(pool.try_spawn(std::move(refused)));  // room again: the same task is accepted now
    CHECK_FALSE(refused.valid());               // NOLINT(bugprone-use-after-move): accepted, so moved from
  }
  CHECK(runs.load() == 1011);  // each accepted task ran once; the refused ones never did
}

TEST_CASE("bounded: a refused task's frame and captures are destroyed when the caller drops them") {
  lifetime_probe::reset();
  std::atomic<int> runs{0};
  {
    pc::thread_pool pool(1);
    held_worker held(pool);
    pool.set_capacity(1);
    CHECK(pool.try_spawn(probed(runs, lifetime_probe{})));
    CHECK_FALSE(pool.try_spawn(probed(runs, lifetime_probe{})));  // the temporary dies here
    CHECK_FALSE(pool.try_post([&runs, p = lifetime_probe{}] { runs.fetch_add(1); }));
    CHECK(lifetime_probe::alive.load() == 1);  // only the accepted task's
  }
  CHECK(runs.load() == 1);
  CHECK(lifetime_probe::alive.load() == 0);
}

TEST_CASE("bounded: a blocking post from a foreign thread waits for room and returns once a task starts") {
  std::atomic<int> runs{0};
  {
    pc::thread_pool pool(1);
    held_worker held(pool);
    pool.set_capacity(1);
    pool.post([&] { runs.fetch_add(1); });  // fills the queue
    CHECK(pool.queued() == 1);
    std::atomic<bool> returned{false};
    std::thread poster([&] {
      pool.post([&] { runs.fetch_add(1); });  // must wait: the queue is full
      pool.spawn(count_up(runs));             // and again, behind it
      returned.store(true);
    });
    REQUIRE(eventually([&] { return pool.stats().waited >= 1; }));
    std::this_thread::sleep_for(50ms);
    CHECK_FALSE(returned.load());
    CHECK(pool.queued() == 1);  // never over the capacity
    held.release();
    poster.join();
    CHECK(returned.load());
  }
  CHECK(runs.load() == 3);
}

TEST_CASE("bounded: a task of the pool posting or spawning more never waits for room (no deadlock)") {
  std::atomic<int> runs{0};
  std::atomic<int> refused{0};
  {
    pc::thread_pool pool(2);
    pool.set_capacity(1);
    pool.post([&] {
      for (int i = 0; i < 50; ++i) pool.post([&] { runs.fetch_add(1); });
      for (int i = 0; i < 50; ++i) pool.spawn(count_up(runs));
      // try_ from a worker may say no, and says so truthfully.
      for (int i = 0; i < 50; ++i)
        if (!pool.try_post([&] { runs.fetch_add(1); })) refused.fetch_add(1);
      runs.fetch_add(1);
    });
  }
  CHECK(runs.load() == 101 + 50 - refused.load());
}

TEST_CASE("bounded: forks, resumptions and schedule() take no place and never wait") {
  pc::thread_pool pool(2);
  pool.set_capacity(1);
  held_worker held(pool);
  pool.post([] {});  // the queue is full from now on (one worker is held, the other runs fib)
  const auto refused = pool.stats().refused;
  // sync_wait's entry, when_all's forks and the resumptions at their joins all go through.
  CHECK(pc::sync_wait(pool, coro_test::fib(18)) == 2584);
  CHECK(pool.stats().refused == refused);
  CHECK(pool.queued() <= 1);
  held.release();
}

TEST_CASE("bounded: set_capacity releases the waiters: a larger capacity some, 0 all") {
  std::atomic<int> runs{0};
  {
    pc::thread_pool pool(1);
    held_worker held(pool);
    pool.set_capacity(1);
    pool.post([&] { runs.fetch_add(1); });
    std::atomic<int> returned{0};
    std::vector<std::thread> posters;
    for (int i = 0; i < 3; ++i)
      posters.emplace_back([&] {
        pool.post([&] { runs.fetch_add(1); });
        returned.fetch_add(1);
      });
    REQUIRE(eventually([&] { return pool.stats().waited == 3; }));
    CHECK(returned.load() == 0);
    pool.set_capacity(2);  // one more place: one waiter goes
    REQUIRE(eventually([&] { return returned.load() == 1; }));
    std::this_thread::sleep_for(20ms);
    CHECK(returned.load() == 1);
    pool.set_capacity(0);  // unbounded: everyone goes
    for (auto& t : posters) t.join();
    CHECK(returned.load() == 3);
  }
  CHECK(runs.load() == 4);
}

namespace {
/// Spawns `n` tasks into `target` with spawn_when_room, from whatever pool it runs on; records
/// whether it was ever resumed off its own pool.
pc::task<void> producer(pc::thread_pool& target, pc::thread_pool& home, int n, std::atomic<int>& runs,
                        std::atomic<int>& spawned, std::atomic<bool>& off_home) {
  for (int i = 0; i < n; ++i) {
    co_await target.spawn_when_room(count_up(runs));
    if (!home.on_worker_thread()) off_home.store(true);
    spawned.fetch_add(1);
  }
}
}  // namespace

TEST_CASE("bounded: spawn_when_room suspends the coroutine, not its thread, and resumes it on its own pool") {
  std::atomic<int> runs{0}, spawned{0};
  std::atomic<bool> off_home{false};
  {
    pc::thread_pool home(1);
    {
      pc::thread_pool pool(1);
      held_worker held(pool);
      pool.set_capacity(1);
      pool.post([&] { runs.fetch_add(1); });  // full
      home.spawn(producer(pool, home, 3, runs, spawned, off_home));
      REQUIRE(eventually([&] { return pool.stats().waited == 1; }));
      // The producer is suspended; home's only worker is free meanwhile.
      std::atomic<bool> home_ran{false};
      home.post([&] { home_ran.store(true); });
      CHECK(eventually([&] { return home_ran.load(); }));
      CHECK(spawned.load() == 0);
      held.release();
      REQUIRE(eventually([&] { return spawned.load() == 3; }));
    }
  }
  CHECK(runs.load() == 4);
  CHECK_FALSE(off_home.load());
}

TEST_CASE("bounded: coroutines of the pool itself wait with spawn_when_room while foreign threads block") {
  const int per_producer = coro_test::sanitized() ? 300 : 2000;
  constexpr int coroutine_producers = 3, thread_producers = 2;
  constexpr std::size_t capacity = 4;
  std::atomic<int> runs{0}, spawned{0};
  std::atomic<bool> off_home{false};
  std::atomic<std::size_t> worst{0};
  {
    pc::thread_pool pool(2);
    pool.set_capacity(capacity);
    for (int p = 0; p < coroutine_producers; ++p)
      pool.spawn(producer(pool, pool, per_producer, runs, spawned, off_home));
    std::vector<std::thread> threads;
    for (int p = 0; p < thread_producers; ++p)
      threads.emplace_back([&] {
        for (int i = 0; i < per_producer; ++i) {
          if (i % 2 == 0)
            pool.post([&] { runs.fetch_add(1, std::memory_order_relaxed); });
          else
            pool.spawn(count_up(runs));
          const std::size_t queued = pool.queued();
          std::size_t seen = worst.load();
          while (queued > seen && !worst.compare_exchange_weak(seen, queued)) {
          }
        }
      });
    for (auto& t : threads) t.join();
  }  // the destructor may begin while the producers still wait for room: they keep their turn
  CHECK(spawned.load() == coroutine_producers * per_producer);
  CHECK(runs.load() == (coroutine_producers + thread_producers) * per_producer);
  CHECK(worst.load() <= capacity);  // foreign threads never pushed the queue past the capacity
  CHECK_FALSE(off_home.load());
}

TEST_CASE("bounded: the destructor ends every wait for room with pool_closed; nothing lost or leaked") {
  lifetime_probe::reset();
  std::atomic<int> runs{0};
  std::atomic<int> closed{0};
  pc::thread_pool home(1);
  auto pool = std::make_unique<pc::thread_pool>(1);
  pc::thread_pool& target = *pool;  // the posters use this, never the unique_ptr the destroyer resets
  auto held = std::make_unique<held_worker>(target);
  target.set_capacity(1);
  target.post([&] { runs.fetch_add(1); });  // accepted: full
  std::vector<std::thread> posters;
  for (int i = 0; i < 2; ++i)
    posters.emplace_back([&] {
      try {
        target.post([&runs, p = lifetime_probe{}] { runs.fetch_add(1000); });
      } catch (const pc::pool_closed& e) {
        CHECK(std::string(e.what()).find("destroyed while waiting for room") != std::string::npos);
        closed.fetch_add(1);
      }
    });
  // A coroutine on another pool, suspended for room.
  home.spawn([](pc::thread_pool& p, std::atomic<int>& runs, std::atomic<int>& closed) -> pc::task<void> {
    try {
      co_await p.spawn_when_room(probed(runs, lifetime_probe{}));
    } catch (const pc::pool_closed&) {
      closed.fetch_add(1);
    }
  }(target, runs, closed));
  REQUIRE(eventually([&] { return target.stats().waited == 3; }));
  // Destroy the pool on another thread: it closes the waits at once, then drains (the held
  // worker keeps it draining until released below).
  std::thread destroyer([&] { pool.reset(); });
  REQUIRE(eventually([&] { return closed.load() == 3; }));
  for (auto& t : posters) t.join();
  held->release();
  destroyer.join();
  held.reset();
  CHECK(runs.load() == 1);  // the accepted task ran; the closed submissions never did
  // The callables and the task the closed waits carried are gone (the home pool's coroutine has
  // finished: closed counted it).
  CHECK(eventually([] { return lifetime_probe::alive.load() == 0; }));
}

TEST_CASE(
    "bounded: during the drain a worker's post is accepted and the pool's own coroutines wait their turn") {
  std::atomic<int> closed{0}, runs{0};
  std::atomic<bool> go{false};
  std::thread starter([&] {
    std::this_thread::sleep_for(50ms);  // the destructor below has begun by then (usually)
    go.store(true);
  });
  {
    pc::thread_pool pool(1);
    pool.set_capacity(1);
    pool.spawn([](pc::thread_pool& p, std::atomic<bool>& go, std::atomic<int>& runs,
                  std::atomic<int>& closed) -> pc::task<void> {
      while (!go.load()) std::this_thread::sleep_for(1ms);  // holds the only worker
      p.post([&runs] { runs.fetch_add(1); });               // a worker: accepted, the queue is full
      try {
        co_await p.spawn_when_room(count_up(runs));  // waits until the post has started
      } catch (const pc::pool_closed&) {
        closed.fetch_add(1);
      }
    }(pool, go, runs, closed));
  }  // the destructor: it cannot finish before the task above, which needs `go`
  starter.join();
  CHECK(runs.load() == 2);
  CHECK(closed.load() == 0);
}

namespace {
std::atomic<int> bounded_failures{0};
void count_bounded_failure(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const std::runtime_error& ex) {
    if (std::string(ex.what()) == "admitted task failed") bounded_failures.fetch_add(1);
  } catch (...) {
  }
}
}  // namespace

TEST_CASE("bounded: an admitted callable's or task's exception is reported, as unbounded ones are") {
  bounded_failures = 0;
  auto previous = pools::set_unhandled_exception_handler(&count_bounded_failure);
  {
    pc::thread_pool pool(1);
    pool.set_capacity(100);
    for (int i = 0; i < 10; ++i) {
      pool.post([] { throw std::runtime_error("admitted task failed"); });
      CHECK(pool.try_spawn([]() -> pc::task<int> {
        throw std::runtime_error("admitted task failed");
        co_return 1;
      }()));
    }
  }
  CHECK(bounded_failures.load() == 20);
  pools::set_unhandled_exception_handler(previous);
}
