// SPDX-License-Identifier: MIT
// The coroutine pool's user code on pools::sim (pools/coroutines/simulated.hpp): the same
// template runs on the tuned thread_pool and on the simulator; seeds replay; time is virtual;
// deadlocks name their tasks.
#include <doctest/doctest.h>

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/simulated.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/sim/explore.hpp>
#include <pools/testing/sim_checks.hpp>

#include <chrono>
#include <cstdio>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace pc = pools::coroutines;
namespace sim = pools::sim;
using namespace std::chrono_literals;

namespace {

// User code, written once against "some pool": tasks, when_all, sleep, mutex, event, latch,
// channel. The tests run it on the real pool and on the simulator.
struct shop {
  pc::channel<int> orders{2};
  pc::async_mutex lock;
  pc::async_event open;
  pc::async_latch served{2};
  int revenue = 0;
  std::vector<int> log;  // the order in which the two cashiers served: the schedule shows here
};

template <class Pool>
pc::task<void> customer(Pool& pool, shop& s) {
  co_await s.open;
  for (int i = 1; i <= 6; ++i) {
    co_await s.orders.send(i);
    if (i % 3 == 0) co_await pc::sleep_for(pool, 1ms);
  }
  s.orders.close();
}

template <class Pool>
pc::task<void> cashier(Pool& pool, shop& s, int id) {
  while (auto order = co_await s.orders.receive()) {
    co_await s.lock.lock();
    s.revenue += *order;
    s.log.push_back(id * 100 + *order);
    s.lock.unlock();
    co_await pool.schedule();
  }
  s.served.count_down();
}

template <class Pool>
pc::task<int> open_shop(Pool& pool, shop& s) {
  s.open.set();
  auto [a, b, c] = co_await pc::when_all(customer(pool, s), cashier(pool, s, 1), cashier(pool, s, 2));
  (void)a, (void)b, (void)c;
  co_await s.served;
  co_return s.revenue;
}

}  // namespace

TEST_CASE("the same user code runs on the thread_pool and on the simulator") {
  {
    pc::thread_pool pool(2);
    shop s;
    CHECK(pc::sync_wait(pool, open_shop(pool, s)) == 21);
  }
  for (const char* strategy : {"random", "pct:3:100"}) {
    CAPTURE(strategy);
    sim::scheduler engine(sim::make_strategy(strategy), 9);
    pc::simulated pool(engine);
    shop s;
    CHECK(pool.run(open_shop(pool, s)) == 21);
    CHECK(s.log.size() == 6);
    CHECK(engine.steps() > 10);
    CHECK(engine.task_count() >= 3);  // main and when_all's forks
  }
}

TEST_CASE("simulated coroutines: the same seed replays the same schedule and trace; other seeds differ") {
  const auto run = [](std::uint64_t seed) {
    sim::scheduler engine(sim::make_strategy("random"), seed);
    pc::simulated pool(engine);
    shop s;
    pool.run(open_shop(pool, s));
    return std::tuple{engine.schedule_text(), s.log, pools::testing::sim_trace_text(engine, "coroutines")};
  };
  const auto first = run(4);
  const auto second = run(4);
  CHECK(first == second);  // the schedule, the cashiers' log, the trace
  CHECK(std::get<2>(first).find("\"task 0 main\"") != std::string::npos);
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 0; seed < 40; ++seed) orders.insert(std::get<1>(run(seed)));
  CHECK(orders.size() >= 5);  // the cashiers' interleaving changes with the seed
}

namespace {
template <class Pool>
pc::task<std::string> wait_with_timeout(Pool& pool, pc::async_event& reply, bool& timed_out) {
  // A 30-second timeout racing a reply that never comes.
  co_await pc::sleep_for(pool, 30s);
  timed_out = !reply.is_set();
  co_return timed_out ? "timeout" : "reply";
}
}  // namespace

TEST_CASE("simulated coroutines: a 30 s timeout takes microseconds of wall time") {
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pc::simulated pool(engine);
  pc::async_event reply;
  bool timed_out = false;
  const auto wall = std::chrono::steady_clock::now();
  CHECK(pool.run(wait_with_timeout(pool, reply, timed_out)) == "timeout");
  const auto took = std::chrono::steady_clock::now() - wall;
  CHECK(timed_out);
  CHECK(engine.now() >= sim::virtual_clock::time_point{} + 30s);
  CHECK(took < 1s);
  MESSAGE("30 virtual seconds took " << std::chrono::duration<double, std::micro>(took).count()
                                     << " us of wall time");
}

namespace {
template <class Pool>
pc::task<void> transfer(Pool& pool, pc::async_mutex& from, pc::async_mutex& to) {
  co_await from.lock();
  co_await pool.schedule();  // a window: the other transfer may take its first lock here
  co_await to.lock();
  to.unlock();
  from.unlock();
}
template <class Pool>
pc::task<void> two_transfers(Pool& pool, pc::async_mutex& a, pc::async_mutex& b) {
  co_await pc::when_all(transfer(pool, a, b), transfer(pool, b, a));
}
}  // namespace

TEST_CASE("simulated coroutines: a lock-order deadlock is found and the report names both tasks") {
  sim::explore_options o;
  o.runs = 200;
  o.out = nullptr;
  o.trace_path = "-";
  std::string report;
  const auto r = sim::explore(o, [&report](sim::scheduler& engine) {
    pc::async_mutex a;
    pc::async_mutex b;
    pc::simulated pool(engine);  // destroyed first: it destroys the deadlocked frames
    try {
      pool.run(two_transfers(pool, a, b));
    } catch (const sim::deadlock_error& e) {
      report = e.what();
      // run() destroyed the deadlocked frames (its task, and the children it owned), but each
      // mutex is still locked and still lists a waiter that lived in one of them: nothing may
      // unlock it now (it would wake a freed frame). A fresh mutex takes its place, so that the
      // destructor sees an unlocked one (the old state owns no memory).
      new (&a) pc::async_mutex;
      new (&b) pc::async_mutex;
      throw;
    }
  });
  REQUIRE(r.failed);
  MESSAGE("seed " << r.seed << ":\n" << report);
  CHECK(report.find("nothing can run and 2 tasks wait") != std::string::npos);
  CHECK(report.find("\"main\" waits on async_mutex") != std::string::npos);
  CHECK(report.find("\"main.1\" waits on async_mutex") != std::string::npos);
}

TEST_CASE("simulated coroutines: a task that waits forever on an event is a deadlock") {
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pc::async_event never;
  pc::simulated pool(engine);
  auto waits = [](pc::async_event& e) -> pc::task<int> {
    co_await e;
    co_return 1;
  };
  CHECK_THROWS_WITH_AS(pool.run(waits(never)), doctest::Contains("task 0 \"main\" waits on async_event"),
                       sim::deadlock_error);
}

TEST_CASE("simulated coroutines: a channel send that does not suspend is no wait") {
  // capture() notes a wait before the send knows whether it must suspend; not_suspended() takes
  // it back. Were it left, the run below would end in a false deadlock report.
  sim::scheduler engine(sim::make_strategy("random"), 2);
  pc::simulated pool(engine);
  pc::channel<int> ch(4);
  auto sends = [](pc::channel<int>& c) -> pc::task<int> {
    for (int i = 0; i < 4; ++i) co_await c.send(i);
    co_return 4;
  };
  CHECK(pool.run(sends(ch)) == 4);
}

TEST_CASE("simulated coroutines: an exception escaping a spawned task stops the run") {
  sim::scheduler engine(sim::make_strategy("random"), 3);
  pc::simulated pool(engine);
  auto fails = []() -> pc::task<void> {
    throw std::runtime_error("spawned task failed");
    co_return;
  };
  pool.spawn(fails(), "failing");
  pool.post([] {});
  CHECK_THROWS_WITH_AS(engine.run(), "spawned task failed", std::runtime_error);
}

namespace {
// A check-then-act across a suspension point: two withdrawals each check the balance, yield
// (an await between check and act), then withdraw. Both pass the check before either acts.
template <class Pool>
pc::task<void> withdraw(Pool& pool, int& balance, int amount) {
  if (balance >= amount) {
    co_await pool.schedule();
    balance -= amount;
  }
}
}  // namespace

TEST_CASE("simulated coroutines: explore finds a check-then-act bug and its seed replays") {
  const auto program = [](sim::scheduler& engine) {
    pc::simulated pool(engine);
    int balance = 100;
    auto both = [](pc::simulated& p, int& b) -> pc::task<void> {
      co_await pc::when_all(withdraw(p, b, 80), withdraw(p, b, 80));
    };
    pool.run(both(pool, balance));
    if (balance < 0) throw std::runtime_error("balance went negative: " + std::to_string(balance));
  };
  pools::testing::check_found_and_replayed(program, 100, "balance went negative: -60");
}

namespace {
// A split critical section: the check and the act each under the lock, nothing awaited between
// them but the second lock() itself. An uncontended lock waits for nobody, so only a scheduling
// point before every lock (pools/sim/scheduler.hpp) lets the other withdrawal in between.
template <class Pool>
pc::task<void> withdraw_split(Pool& /*pool*/, pc::async_mutex& lock, int& balance, int amount) {
  co_await lock.lock();
  const bool enough = balance >= amount;
  lock.unlock();
  if (!enough) co_return;
  co_await lock.lock();
  balance -= amount;
  lock.unlock();
}

template <class Pool>
pc::task<void> two_split_withdrawals(Pool& pool, pc::async_mutex& lock, int& balance) {
  co_await pc::when_all(withdraw_split(pool, lock, balance, 80), withdraw_split(pool, lock, balance, 80));
}
}  // namespace

TEST_CASE("simulated coroutines: every lock is a scheduling point, so a split critical section is found") {
  const auto program = [](sim::scheduler& engine) {
    pc::async_mutex lock;
    int balance = 100;
    {
      pc::simulated pool(engine);
      pool.run(two_split_withdrawals(pool, lock, balance));
    }
    if (balance < 0) throw std::runtime_error("balance went negative: " + std::to_string(balance));
  };
  pools::testing::check_found_and_replayed(program, 100, "balance went negative: -60");
}

namespace {
// One task, no contention: every co_await below would go through at once on a pool.
template <class Pool>
pc::task<int> uncontended(Pool& /*pool*/, pc::async_mutex& lock, pc::async_event& event,
                          pc::channel<int>& ch) {
  co_await lock.lock();
  lock.unlock();
  event.set();
  co_await event;  // set already
  co_await ch.send(7);
  const auto v = co_await ch.receive();
  co_return v.value_or(0);
}
}  // namespace

TEST_CASE(
    "simulated coroutines: each co_await on a primitive is a point before it, whether it waits or not") {
  {  // on a pool: the awaiters' fast paths, no simulator
    pc::thread_pool pool(1);
    pc::async_mutex lock;
    pc::async_event event;
    pc::channel<int> ch(1);
    CHECK(pc::sync_wait(pool, uncontended(pool, lock, event, ch)) == 7);
  }
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pc::async_mutex lock;
  pc::async_event event;
  pc::channel<int> ch(1);
  {
    pc::simulated pool(engine);
    CHECK(pool.run(uncontended(pool, lock, event, ch)) == 7);
  }
  const std::string schedule = engine.schedule_text();
  MESSAGE(schedule);
  CHECK(engine.points() == 4);  // lock, event wait, send, receive: unlock() and set() cannot be points
  CHECK(engine.steps() == 5);
  for (const char* operation : {"async_mutex lock", "async_event wait", "channel send", "channel receive"}) {
    CAPTURE(operation);
    CHECK(schedule.find(std::string("yields before ") + operation) != std::string::npos);
    CHECK(schedule.find(std::string(operation) + " went through") != std::string::npos);
  }
}
