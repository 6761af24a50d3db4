// SPDX-License-Identifier: MIT
// async_event, async_latch, async_mutex, channel, sleep_for / sleep_until.
#include <doctest/doctest.h>

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;

TEST_CASE("async_event: waiters suspend until set(), from any thread; set events do not suspend") {
  pc::thread_pool pool(2);
  pc::async_event event;
  pc::async_latch all_waiting(100);
  std::atomic<int> released{0};
  auto waiter = [](pc::async_event& e, pc::async_latch& w, std::atomic<int>& r) -> pc::task<void> {
    w.count_down();
    co_await e;
    r.fetch_add(1);
  };
  for (int i = 0; i < 100; ++i) pool.spawn(waiter(event, all_waiting, released));
  auto wait_all = [](pc::async_latch& w) -> pc::task<void> { co_await w; };
  pc::sync_wait(pool, wait_all(all_waiting));  // every waiter has at least reached its co_await
  CHECK(released.load() == 0);
  CHECK_FALSE(event.is_set());
  event.set();  // from the main thread: waiters go through the injection queue
  // Bounded wait for the released waiters (they run on the workers):
  for (int spins = 0; released.load() != 100 && spins < 10'000; ++spins) std::this_thread::sleep_for(1ms);
  CHECK(released.load() == 100);
  CHECK(event.is_set());
  auto after_set = [](pc::async_event& e) -> pc::task<bool> {
    co_await e;  // already set: returns at once
    e.reset();
    co_return !e.is_set();
  };
  CHECK(pc::sync_wait(pool, after_set(event)));
}

TEST_CASE("async_latch: released when the count reaches zero; bad counts are errors") {
  pc::thread_pool pool(2);
  pc::async_latch latch(1000);
  std::atomic<int> counted{0};
  for (int i = 0; i < 1000; ++i) {
    pool.post([&] {
      counted.fetch_add(1, std::memory_order_relaxed);
      latch.count_down();
    });
  }
  auto wait = [](pc::async_latch& l, std::atomic<int>& c) -> pc::task<int> {
    co_await l;
    co_return c.load(std::memory_order_relaxed);  // every count_down's writes are visible
  };
  CHECK(pc::sync_wait(pool, wait(latch, counted)) == 1000);
  CHECK(latch.try_wait());
  CHECK_THROWS_AS(latch.count_down(), std::logic_error);
  CHECK_THROWS_AS(pc::async_latch(-1), std::invalid_argument);
  pc::async_latch zero(0);
  CHECK(zero.try_wait());
  pc::async_latch two(2);
  CHECK_THROWS_AS(two.count_down(0), std::invalid_argument);
}

TEST_CASE("async_mutex: mutual exclusion across workers, and a suspended critical section") {
  pc::thread_pool pool(4);
  pc::async_mutex mutex;
  std::int64_t counter = 0;  // deliberately not atomic: the mutex must make this safe (TSan checks)
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  const int tasks = 64, rounds = coro_test::sanitized() ? 200 : 2000;
  auto worker = [](pc::thread_pool& p, pc::async_mutex& m, std::int64_t& c, std::atomic<int>& in,
                   std::atomic<bool>& bad, int n) -> pc::task<void> {
    for (int i = 0; i < n; ++i) {
      auto guard = co_await m.scoped_lock();
      if (in.fetch_add(1) != 0) bad = true;
      ++c;
      if (i % 100 == 0) co_await p.schedule();  // hold the lock across a suspension
      in.fetch_sub(1);
    }
  };
  auto all = [&]() -> pc::task<void> {
    std::vector<pc::task<void>> ts;
    for (int t = 0; t < tasks; ++t) ts.push_back(worker(pool, mutex, counter, inside, overlap, rounds));
    co_await pc::when_all(std::move(ts));
  };
  pc::sync_wait(pool, all());
  CHECK(counter == std::int64_t{tasks} * rounds);
  CHECK_FALSE(overlap.load());
  CHECK(mutex.try_lock());
  CHECK_FALSE(mutex.try_lock());
  mutex.unlock();
}

TEST_CASE("async_mutex: the lock is handed to waiters in arrival order") {
  pc::thread_pool pool(1);
  pc::async_mutex mutex;
  std::vector<int> arrivals, acquisitions;  // one worker: no data race on these
  auto body = [&]() -> pc::task<void> {
    co_await mutex.lock();  // held while the others queue up
    pc::async_latch queued(5);
    pc::async_latch finished(5);
    auto contender = [](pc::async_mutex& m, std::vector<int>& arr, std::vector<int>& acq, int id,
                        pc::async_latch& q, pc::async_latch& f) -> pc::task<void> {
      arr.push_back(id);
      q.count_down();
      auto g = co_await m.scoped_lock();
      acq.push_back(id);
      f.count_down();
    };
    for (int i = 0; i < 5; ++i) pool.spawn(contender(mutex, arrivals, acquisitions, i, queued, finished));
    co_await queued;  // every contender is now suspended in lock()
    mutex.unlock();
    co_await finished;
  };
  pc::sync_wait(pool, body());
  REQUIRE(arrivals.size() == 5);
  CHECK(acquisitions == arrivals);
}

namespace {
pc::task<void> produce(pc::channel<int>& c, int base, int n) {
  for (int i = 0; i < n; ++i) {
    const bool ok = co_await c.send(base + i);
    if (!ok) throw std::logic_error("send failed before close");
  }
}
pc::task<void> consume(pc::channel<int>& c, std::atomic<std::int64_t>& s, std::atomic<int>& r) {
  int last_from[4] = {-1, -1, -1, -1};
  while (auto v = co_await c.receive()) {
    const int producer = *v / 1'000'000, seq = *v % 1'000'000;
    if (seq <= last_from[producer]) throw std::logic_error("out of order");  // FIFO per producer
    last_from[producer] = seq;
    s.fetch_add(*v, std::memory_order_relaxed);
    r.fetch_add(1, std::memory_order_relaxed);
  }
}
}  // namespace

TEST_CASE("channel: FIFO delivery from many producers to many consumers, then close") {
  pc::thread_pool pool(4);
  pc::channel<int> ch(8);
  const int producers = 4, per_producer = coro_test::sanitized() ? 2000 : 20000, consumers = 3;
  std::atomic<std::int64_t> sum{0};
  std::atomic<int> received{0};
  auto run = [&]() -> pc::task<void> {
    std::vector<pc::task<void>> cs;
    for (int c = 0; c < consumers; ++c) cs.push_back(consume(ch, sum, received));
    auto producers_then_close = [](pc::channel<int>& c, int np, int n) -> pc::task<void> {
      std::vector<pc::task<void>> ps;
      for (int p = 0; p < np; ++p) ps.push_back(produce(c, p * 1'000'000, n));
      co_await pc::when_all(std::move(ps));
      c.close();
    };
    cs.push_back(producers_then_close(ch, producers, per_producer));
    co_await pc::when_all(std::move(cs));
  };
  pc::sync_wait(pool, run());
  std::int64_t expected = 0;
  for (int p = 0; p < producers; ++p)
    for (int i = 0; i < per_producer; ++i) expected += p * 1'000'000 + i;
  CHECK(received.load() == producers * per_producer);
  CHECK(sum.load() == expected);
  CHECK(ch.is_closed());
}

TEST_CASE("channel: bounded — a sender waits while full; close() releases waiters; capacity 0 is refused") {
  CHECK_THROWS_AS(pc::channel<int>(0), std::invalid_argument);
  pc::thread_pool pool(1);
  pc::channel<int> ch(2);
  auto body = [&]() -> pc::task<bool> {
    bool ok = co_await ch.send(1);
    ok = ok && co_await ch.send(2);
    ok = ok && ch.size() == 2;
    std::atomic<bool> third_done{false};
    auto third = [](pc::channel<int>& c, std::atomic<bool>& d) -> pc::task<bool> {
      const bool sent = co_await c.send(3);  // full: suspends until a receive makes room
      d = true;
      co_return sent;
    };
    pc::async_latch spawned(1);
    bool third_result = false;
    auto run_third = [&]() -> pc::task<void> {
      spawned.count_down();
      third_result = co_await third(ch, third_done);
    };
    pool.spawn(run_third());
    co_await spawned;
    for (int i = 0; i < 5; ++i) co_await pool.schedule();
    ok = ok && !third_done.load();  // still blocked: the channel is full
    auto a = co_await ch.receive();
    for (int i = 0; i < 5 && !third_done.load(); ++i) co_await pool.schedule();
    ok = ok && third_done.load() && third_result && a == 1;
    auto b = co_await ch.receive();
    auto c = co_await ch.receive();
    ok = ok && b == 2 && c == 3;
    // A receiver waiting on an empty channel is released by close() with nullopt.
    std::optional<int> late = 42;
    bool late_done = false;
    auto waiting_receiver = [&]() -> pc::task<void> {
      late = co_await ch.receive();
      late_done = true;
    };
    pool.spawn(waiting_receiver());
    for (int i = 0; i < 5; ++i) co_await pool.schedule();
    ok = ok && !late_done;
    ch.close();
    for (int i = 0; i < 5 && !late_done; ++i) co_await pool.schedule();
    ok = ok && late_done && !late.has_value();
    ok = ok && !(co_await ch.send(9));  // closed: send reports false
    co_return ok;
  };
  CHECK(pc::sync_wait(pool, body()));
}

TEST_CASE("channel: buffered values are still received after close, then nullopt") {
  pc::thread_pool pool(1);
  pc::channel<std::unique_ptr<int>> ch(4);  // move-only values
  auto body = [&]() -> pc::task<int> {
    co_await ch.send(std::make_unique<int>(1));
    co_await ch.send(std::make_unique<int>(2));
    ch.close();
    int sum = 0;
    while (auto v = co_await ch.receive()) sum += **v;
    co_return sum;
  };
  CHECK(pc::sync_wait(pool, body()) == 3);
}

TEST_CASE("sleep_for: sleeps at least the duration without holding the worker") {
  pc::thread_pool pool(1);  // one worker: if the sleeper blocked it, the other task could not run
  std::atomic<bool> other_ran{false};
  auto body = [&]() -> pc::task<bool> {
    auto sleeper = [](pc::thread_pool& p, std::atomic<bool>& other) -> pc::task<bool> {
      const auto start = std::chrono::steady_clock::now();
      co_await pc::sleep_for(p, 30ms);
      co_return std::chrono::steady_clock::now() - start >= 30ms && other.load();
    };
    auto other = [](std::atomic<bool>& o) -> pc::task<void> {
      o = true;
      co_return;
    };
    auto [slept_ok, unused] = co_await pc::when_all(sleeper(pool, other_ran), other(other_ran));
    (void)unused;
    co_return slept_ok;
  };
  CHECK(pc::sync_wait(pool, body()));
}

TEST_CASE("sleep_until: deadlines are kept in order, and past deadlines do not suspend") {
  pc::thread_pool pool(2);
  std::vector<int> order;
  pc::async_mutex m;
  auto sleeper = [](pc::thread_pool& p, std::vector<int>& o, pc::async_mutex& mu, int id,
                    std::chrono::steady_clock::time_point at) -> pc::task<void> {
    co_await pc::sleep_until(p, at);
    auto g = co_await mu.scoped_lock();
    o.push_back(id);
  };
  const auto t0 = std::chrono::steady_clock::now();
  auto body = [&]() -> pc::task<void> {
    co_await pc::when_all(sleeper(pool, order, m, 3, t0 + 90ms), sleeper(pool, order, m, 1, t0 + 10ms),
                          sleeper(pool, order, m, 2, t0 + 50ms), sleeper(pool, order, m, 0, t0 - 1s));
  };
  pc::sync_wait(pool, body());
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(std::chrono::steady_clock::now() - t0 >= 90ms);
}

TEST_CASE("sleep_for: many sleepers on an idle pool all wake (parked workers honour timer deadlines)") {
  pc::thread_pool pool(2);
  std::atomic<int> woke{0};
  auto body = [&]() -> pc::task<void> {
    std::vector<pc::task<void>> ts;
    for (int i = 0; i < 200; ++i) {
      ts.push_back([](pc::thread_pool& p, std::atomic<int>& w, int k) -> pc::task<void> {
        co_await pc::sleep_for(p, std::chrono::milliseconds(1 + k % 20));
        w.fetch_add(1);
      }(pool, woke, i));
    }
    co_await pc::when_all(std::move(ts));
  };
  pc::sync_wait(pool, body());
  CHECK(woke.load() == 200);
}

// A latch's last waiter often destroys the latch as soon as it runs. Resumed inline (it waits
// outside any pool), it does so inside count_down's set(): set() must touch nothing of the event
// once it has begun resuming waiters. ASan reports the use after free if it does.
TEST_CASE("async_event: a waiter resumed by set() may destroy the event at once") {
  for (int round = 0; round < 3; ++round) {
    auto* latch = new pools::coroutines::async_latch(1);
    bool resumed = false;
    auto waiter = [](pools::coroutines::async_latch* l, bool& r) -> pools::coroutines::task<void> {
      co_await *l;
      delete l;
      r = true;
    };
    pools::coroutines::task<void> t = waiter(latch, resumed);
    t.handle().resume();  // runs to the co_await, outside any pool
    REQUIRE_FALSE(resumed);
    latch->count_down();  // resumes the waiter inline, which deletes the latch
    CHECK(resumed);
  }
}

// The other way a waiter goes on: it finds the event already set and does not suspend. That can
// happen while set() is still running on another thread, so set() must publish "set" as its last
// touch of the event. A thread that sees the latch released deletes it at once; TSan (or ASan)
// reports set() touching it afterwards.
TEST_CASE("async_event: a waiter that finds the event set may destroy it while set() returns") {
  for (int round = 0; round < 500; ++round) {
    auto* latch = new pools::coroutines::async_latch(1);
    std::atomic<bool> go{false};
    std::thread setter([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      latch->count_down();
    });
    go.store(true, std::memory_order_release);
    while (!latch->try_wait()) {
    }
    delete latch;
    setter.join();
  }
}
