// SPDX-License-Identifier: MIT
// The fiber pool's user code on pools::sim (pools/fibers/simulated.hpp): the same template runs
// on the tuned thread_pool and on the simulator; seeds replay; time is virtual; deadlocks name
// their fibers and what each waits on.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/simulated.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/sim/explore.hpp>
#include <pools/testing/sim_checks.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pf = pools::fibers;
namespace sim = pools::sim;
using namespace std::chrono_literals;

namespace {

// User code, written once against "some pool": spawn and join, yield, sleep, a mutex, a
// condition variable, a channel. The tests run it on the real pool and on the simulator.
struct shop {
  pf::channel<int> orders{2};
  pf::mutex lock;
  pf::condition_variable opened;
  bool open = false;     // guarded by lock
  int revenue = 0;       // guarded by lock
  std::vector<int> log;  // guarded by lock: who served which order, in order (the schedule shows here)
};

void cashier(shop& s, int id) {
  while (auto order = s.orders.recv()) {
    {
      std::lock_guard guard(s.lock);
      s.revenue += *order;
      s.log.push_back(id * 100 + *order);
    }
    pf::this_fiber::yield();
  }
}

template <class Pool>
int open_shop(Pool& pool, shop& s) {
  auto customer = pool.spawn([&s] {
    {
      std::unique_lock guard(s.lock);
      s.opened.wait(guard, [&s] { return s.open; });
    }
    for (int i = 1; i <= 6; ++i) {
      s.orders.send(i);
      if (i % 3 == 0) pf::this_fiber::sleep_for(1ms);
    }
    s.orders.close();
  });
  auto first = pool.spawn([&s] { cashier(s, 1); });
  auto second = pool.spawn([&s] { cashier(s, 2); });
  {
    std::lock_guard guard(s.lock);
    s.open = true;
  }
  s.opened.notify_all();
  customer.join();
  first.join();
  second.join();
  std::lock_guard guard(s.lock);
  return s.revenue;
}

}  // namespace

TEST_CASE("the same fiber code runs on the thread_pool and on the simulator") {
  {
    pf::thread_pool pool(2);
    shop s;
    CHECK(pool.run([&] { return open_shop(pool, s); }) == 21);
  }
  for (const char* strategy : {"random", "pct:3:100"}) {
    CAPTURE(strategy);
    sim::scheduler engine(sim::make_strategy(strategy), 9);
    pf::simulated pool(engine);
    shop s;
    CHECK(pool.run([&] { return open_shop(pool, s); }) == 21);
    CHECK(s.log.size() == 6);
    CHECK(engine.steps() > 10);
    CHECK(engine.task_count() == 4);  // main and its three fibers
    CHECK(engine.name_of(1) == "main.1");
  }
}

TEST_CASE("simulated fibers: the same seed replays the same schedule and trace; other seeds differ") {
  struct outcome {
    std::string schedule;
    std::vector<int> log;
    std::string trace;
    bool operator==(const outcome&) const = default;
  };
  const auto run = [](std::uint64_t seed) {
    sim::scheduler engine(sim::make_strategy("random"), seed);
    pf::simulated pool(engine);
    shop s;
    pool.run([&] { return open_shop(pool, s); });
    return outcome{engine.schedule_text(), s.log, pools::testing::sim_trace_text(engine, "fibers")};
  };
  const outcome first = run(4);
  const outcome second = run(4);
  CHECK(first.schedule == second.schedule);
  CHECK(first.log == second.log);
  CHECK(first.trace == second.trace);
  CHECK(first.trace.find("\"task 0 main\"") != std::string::npos);
  CHECK(first.schedule.find("waits on channel recv") != std::string::npos);
  std::set<std::vector<int>> orders;
  for (std::uint64_t seed = 0; seed < 40; ++seed) orders.insert(run(seed).log);
  CHECK(orders.size() >= 5);  // the cashiers' interleaving changes with the seed
}

namespace {
// User code: wait up to 30 s for a reply; with `reply_after` > 0 a fiber replies then.
template <class Pool>
std::string wait_for_reply(Pool& pool, std::chrono::seconds reply_after) {
  pf::mutex m;
  pf::condition_variable cv;
  bool reply = false;  // guarded by m
  pf::join_handle<void> replier;
  if (reply_after > 0s) {
    replier = pool.spawn([&] {
      pf::this_fiber::sleep_for(reply_after);
      std::lock_guard guard(m);
      reply = true;
      cv.notify_one();
    });
  }
  bool got = false;
  {
    std::unique_lock guard(m);
    got = cv.wait_for(guard, 30s, [&] { return reply; });
  }
  if (replier.joinable()) replier.join();
  return got ? "reply" : "timeout";
}
}  // namespace

TEST_CASE("simulated fibers: a 30 s timeout takes microseconds of wall time") {
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pf::simulated pool(engine);
  const auto wall = std::chrono::steady_clock::now();
  const std::string result = pool.run([&] { return wait_for_reply(pool, 0s); });
  const auto took = std::chrono::steady_clock::now() - wall;
  CHECK(result == "timeout");
  CHECK(engine.now() >= sim::virtual_clock::time_point{} + 30s);
  CHECK(engine.now() < sim::virtual_clock::time_point{} + 30s + 1ms);
  CHECK(took < 1s);
  MESSAGE("30 virtual seconds took " << std::chrono::duration<double, std::micro>(took).count()
                                     << " us of wall time");
}

TEST_CASE("simulated fibers: a reply before the timeout wins, and the timeout's timer is cancelled") {
  sim::scheduler engine(sim::make_strategy("random"), 2);
  pf::simulated pool(engine);
  CHECK(pool.run([&] { return wait_for_reply(pool, 10s); }) == "reply");
  // The run ends at the reply: the 30 s timer was cancelled, or the clock would have jumped to it.
  CHECK(engine.now() >= sim::virtual_clock::time_point{} + 10s);
  CHECK(engine.now() < sim::virtual_clock::time_point{} + 11s);
}

namespace {
void transfer(pf::mutex& from, pf::mutex& to) {
  std::lock_guard first(from);
  pf::this_fiber::yield();  // a window: the other transfer may take its first lock here
  std::lock_guard second(to);
}

template <class Pool>
void two_transfers(Pool& pool, pf::mutex& a, pf::mutex& b) {
  auto one = pool.spawn([&] { transfer(a, b); });
  auto other = pool.spawn([&] { transfer(b, a); });
  one.join();
  other.join();
}
}  // namespace

TEST_CASE("simulated fibers: a lock-order deadlock is found and the report names every waiting fiber") {
  sim::explore_options o;
  o.runs = 200;
  o.out = nullptr;
  o.trace_path = "-";
  std::string report;
  const auto r = sim::explore(o, [&report](sim::scheduler& engine) {
    pf::mutex a;
    pf::mutex b;
    pf::simulated pool(engine);  // destroyed first: it frees the deadlocked fibers' stacks
    try {
      pool.run([&] { two_transfers(pool, a, b); });
    } catch (const sim::deadlock_error& e) {
      report = e.what();
      throw;
    }
  });
  REQUIRE(r.failed);
  MESSAGE("seed " << r.seed << ":\n" << report);
  CHECK(report.find("nothing can run and 3 tasks wait") != std::string::npos);
  CHECK(report.find("task 0 \"main\" waits on join of task 1 \"main.1\"") != std::string::npos);
  CHECK(report.find("task 1 \"main.1\" waits on mutex 0x") != std::string::npos);
  CHECK(report.find("task 2 \"main.2\" waits on mutex 0x") != std::string::npos);
}

TEST_CASE("simulated fibers: runs that deadlock and runs that do not, seed after seed, tear down cleanly") {
  // Each deadlocked run leaves three fibers suspended for good; the pool frees their stacks
  // unrun (ASan and LSan, in the asan preset, see any slip). Both outcomes occur, for both strategies.
  for (const char* strategy : {"random", "pct:2:20"}) {
    CAPTURE(strategy);
    int deadlocked = 0;
    int finished = 0;
    for (std::uint64_t seed = 1; seed <= 100; ++seed) {
      sim::scheduler engine(sim::make_strategy(strategy), seed);
      pf::mutex a;
      pf::mutex b;
      pf::simulated pool(engine);
      try {
        pool.run([&] { two_transfers(pool, a, b); });
        ++finished;
      } catch (const sim::deadlock_error&) {
        ++deadlocked;
      }
    }
    CHECK(deadlocked > 0);
    CHECK(finished > 0);
    MESSAGE(std::string(strategy) << ": " << deadlocked << " of 100 seeds deadlocked");
  }
}

TEST_CASE("simulated fibers: a receive no one sends to is a deadlock naming the channel") {
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pf::channel<int> never;
  pf::simulated pool(engine);
  CHECK_THROWS_WITH_AS(pool.run([&] { return never.recv().value_or(0); }),
                       doctest::Contains("task 0 \"main\" waits on channel recv 0x"), sim::deadlock_error);
}

namespace {
std::atomic<int> reported{0};
void count_report(std::exception_ptr) noexcept {
  reported.fetch_add(1);
}
}  // namespace

TEST_CASE("simulated fibers: an exception escaping a posted fiber stops the run") {
  const auto previous = pools::set_unhandled_exception_handler(&count_report);
  reported = 0;
  {
    sim::scheduler engine(sim::make_strategy("random"), 3);
    pf::simulated pool(engine);
    pool.post([] { throw std::runtime_error("posted fiber failed"); });
    CHECK_THROWS_WITH_AS(pool.run([] {
      pf::this_fiber::yield();
      return 1;
    }),
                         "posted fiber failed", std::runtime_error);
  }
  pools::set_unhandled_exception_handler(previous);
  CHECK(reported == 1);  // reported as on the pools, too
}

TEST_CASE("simulated fibers: a joined fiber's exception comes out of join, as on the pools") {
  sim::scheduler engine(sim::make_strategy("random"), 5);
  pf::simulated pool(engine);
  const std::string what = pool.run([&] {
    auto child = pool.spawn([]() -> int { throw std::runtime_error("child failed"); });
    try {
      (void)child.join();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  });
  CHECK(what == "child failed");
}

namespace {
// A check-then-act across a yield: two withdrawals each check the balance, yield (a point where
// another fiber may run, as another worker may on a pool), then withdraw.
void withdraw(int& balance, int amount) {
  if (balance >= amount) {
    pf::this_fiber::yield();
    balance -= amount;
  }
}
}  // namespace

TEST_CASE("simulated fibers: explore finds a check-then-act bug and its seed replays") {
  const auto program = [](sim::scheduler& engine) {
    pf::simulated pool(engine);
    int balance = 100;
    pool.run([&] {
      auto a = pool.spawn([&] { withdraw(balance, 80); });
      auto b = pool.spawn([&] { withdraw(balance, 80); });
      a.join();
      b.join();
    });
    if (balance < 0) throw std::runtime_error("balance went negative: " + std::to_string(balance));
  };
  pools::testing::check_found_and_replayed(program, 100, "balance went negative: -60");
}

namespace {
// A split critical section: the check and the act each under the lock, back to back. An
// uncontended lock() waits for nobody, so only a scheduling point before every operation of the
// mutex (pools/sim/scheduler.hpp) lets the other withdrawal in between.
void withdraw_split(pf::mutex& lock, int& balance, int amount) {
  bool enough = false;
  {
    std::lock_guard guard(lock);
    enough = balance >= amount;
  }
  if (!enough) return;
  std::lock_guard guard(lock);
  balance -= amount;
}
}  // namespace

TEST_CASE(
    "simulated fibers: every lock and unlock is a scheduling point, so a split critical section is found") {
  const auto program = [](sim::scheduler& engine) {
    pf::mutex lock;
    int balance = 100;
    {
      pf::simulated pool(engine);
      pool.run([&] {
        auto a = pool.spawn([&] { withdraw_split(lock, balance, 80); });
        auto b = pool.spawn([&] { withdraw_split(lock, balance, 80); });
        a.join();
        b.join();
      });
    }
    if (balance < 0) throw std::runtime_error("balance went negative: " + std::to_string(balance));
  };
  pools::testing::check_found_and_replayed(program, 100, "balance went negative: -60");
}

TEST_CASE("simulated fibers: every operation of a primitive is a point before it, whether it waits or not") {
  sim::scheduler engine(sim::make_strategy("random"), 1);
  pf::mutex lock;
  pf::condition_variable cv;
  pf::channel<int> ch(1);
  pf::latch done(1);
  int got = 0;
  {
    pf::simulated pool(engine);
    pool.run([&] {
      lock.lock();                  // 1
      lock.unlock();                // 2
      if (lock.try_lock())          // 3
        lock.unlock();              // 4
      cv.notify_one();              // 5
      ch.send(7);                   // 6
      got = ch.recv().value_or(0);  // 7
      ch.close();                   // 8
      done.count_down();            // 9
      done.wait();                  // 10
    });
  }
  const std::string schedule = engine.schedule_text();
  MESSAGE(schedule);
  CHECK(got == 7);
  CHECK(engine.points() == 10);
  CHECK(engine.steps() == 11);
  for (const char* operation :
       {"mutex lock", "mutex unlock", "mutex try_lock", "condition_variable notify_one", "channel send",
        "channel recv", "channel close", "latch count_down", "latch wait"}) {
    CAPTURE(operation);
    CHECK(schedule.find(std::string("yields before ") + operation + "\n") != std::string::npos);
  }
  // The points are the simulator's: outside a simulated fiber the same calls do not switch.
  lock.lock();
  lock.unlock();
  CHECK(engine.points() == 10);
}
