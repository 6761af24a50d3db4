// SPDX-License-Identifier: MIT
// thread_pool: spawn/join/detach/run/post, exceptions across join, run-until-blocks, stealing,
// migration between threads, and the per-fiber exception state.
#include <doctest/doctest.h>

#include <pools/executor.hpp>
#include <pools/fibers/channel.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/zero_threads.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::fibers::thread_pool;

static_assert(pools::Executor<thread_pool>);

namespace {
using fibers_test::custom_error;
using fibers_test::fib;
using fibers_test::thread_id_now;
}  // namespace

TEST_CASE("thread_pool: a thread count of 0 starts one worker per hardware thread") {
  pools::testing::check_zero_threads_means_every_core([] { return thread_pool(0); });
  pools::fibers::pool_options o;
  o.threads = 0;
  pools::testing::check_zero_threads_means_every_core([&o] { return thread_pool(o); });
}

TEST_CASE("thread_pool: bad construction arguments are rejected with a clear message") {
  pools::fibers::pool_options o;
  o.threads = 1;
  o.stack.size = 1024;
  CHECK_THROWS_AS(thread_pool{o}, std::invalid_argument);
  o.stack.size = std::size_t{2} << 30;
  CHECK_THROWS_AS(thread_pool{o}, std::invalid_argument);
}

TEST_CASE("thread_pool: run returns values, void, move-only results, and rethrows") {
  thread_pool pool(2);
  CHECK(pool.concurrency() == 2);
  CHECK(pool.run([] { return 6 * 7; }) == 42);
  std::atomic<int> touched{0};
  pool.run([&] { touched = 1; });
  CHECK(touched.load() == 1);
  CHECK(*pool.run([] { return std::make_unique<int>(5); }) == 5);
  int target = 0;
  int& ref = pool.run([&target]() -> int& { return target; });
  CHECK(&ref == &target);
  CHECK_THROWS_WITH_AS(pool.run([]() -> int { throw std::invalid_argument("bad input 17"); }), "bad input 17",
                       std::invalid_argument);
}

TEST_CASE("thread_pool: exceptions cross join with their type, through several levels") {
  thread_pool pool(2);
  SUBCASE("a child's exception reaches the parent fiber's join") {
    const int code = pool.run([&pool] {
      auto child = pool.spawn([]() -> int { throw custom_error(7); });
      try {
        child.join();
      } catch (const custom_error& e) {
        return e.code;
      }
      return -1;
    });
    CHECK(code == 7);
  }
  SUBCASE("a grandchild's exception propagates through two joins to run()") {
    CHECK_THROWS_AS(pool.run([&pool] {
      return pool.spawn([&pool] { return pool.spawn([]() -> int { throw custom_error(3); }).join(); }).join();
    }),
                    custom_error);
  }
  SUBCASE("a child that blocks before throwing (joined while suspended)") {
    pools::fibers::latch gate(1);
    CHECK_THROWS_WITH_AS(pool.run([&] {
      auto child = pool.spawn([&] {
        gate.wait();
        throw std::out_of_range("late failure");
      });
      auto opener = pool.spawn([&] { gate.count_down(); });
      opener.join();
      child.join();
    }),
                         "late failure", std::out_of_range);
  }
}

TEST_CASE("thread_pool: join_handle rules") {
  thread_pool pool(2);
  SUBCASE("join once; a second join is a logic_error") {
    pool.run([&pool] {
      auto h = pool.spawn([] { return 1; });
      CHECK(h.joinable());
      CHECK(h.join() == 1);
      CHECK_FALSE(h.joinable());
      CHECK_THROWS_AS(h.join(), std::logic_error);
      CHECK_THROWS_AS(h.detach(), std::logic_error);
    });
  }
  SUBCASE("a detached fiber still runs; its exception is reported") {
    fibers_test::reported_exceptions reports("detached failure");
    pools::fibers::latch ran(2);
    {
      auto ok = pool.spawn([&] { ran.count_down(); });
      ok.detach();
      auto bad = pool.spawn([&] {
        ran.count_down();
        throw std::runtime_error("detached failure");
      });
      bad.detach();
      ran.wait();
    }
    CHECK(fibers_test::eventually([&] { return reports.seen() == 1; }));
  }
  SUBCASE("detaching a fiber that already failed reports at detach") {
    fibers_test::reported_exceptions reports("early failure");
    auto h = pool.spawn([]() -> int { throw std::runtime_error("early failure"); });
    CHECK(fibers_test::eventually([&] { return h.done(); }));
    h.detach();
    CHECK(reports.seen() == 1);
  }
  SUBCASE("a handle destroyed while joinable joins, and reports the exception") {
    fibers_test::reported_exceptions reports("dropped failure");
    std::atomic<bool> finished{false};
    {
      auto h = pool.spawn([&] {
        pools::fibers::this_fiber::sleep_for(std::chrono::milliseconds(20));
        finished = true;
        throw std::runtime_error("dropped failure");
      });
    }
    CHECK(finished.load());  // the destructor waited
    CHECK(reports.seen() == 1);
  }
  SUBCASE("move assignment joins the overwritten handle first") {
    std::atomic<int> done{0};
    pool.run([&] {
      auto a = pool.spawn([&] { done.fetch_add(1); });
      a = pool.spawn([&] { done.fetch_add(10); });
      a.join();
    });
    CHECK(done.load() == 11);
  }
}

TEST_CASE("thread_pool: spawn and join from outside the pool") {
  thread_pool pool(2);
  std::vector<pools::fibers::join_handle<int>> handles;
  for (int i = 0; i < 100; ++i) handles.push_back(pool.spawn([i] { return i * i; }));
  for (int i = 0; i < 100; ++i) CHECK(handles[static_cast<std::size_t>(i)].join() == i * i);
}

TEST_CASE("thread_pool: a fiber that never blocks gets no stack of its own (run until it blocks)") {
  pools::fibers::pool_options o;
  o.threads = 1;
  thread_pool pool(o);
  // fib(20) spawns 10,945 fibers. With one worker and no blocking, each join finds its child
  // still on the deque and runs it inline: one fiber (the root's) does everything.
  CHECK(pool.run([&pool] { return fib(pool, 20); }) == 6765);
  CHECK(pool.stats().fibers_created == 1);

  // A child that must wait does get its own stack, and only then.
  pools::fibers::channel<int> ch;
  CHECK(pool.run([&] {
    auto receiver = pool.spawn([&] { return *ch.recv(); });
    pools::fibers::this_fiber::yield();  // the receiver starts, blocks, and the worker moves on
    ch.send(9);
    return receiver.join();
  }) == 9);
  CHECK(pool.stats().fibers_created == 2);
}

TEST_CASE("thread_pool: fork-join agrees with the serial answer on 1, 2 and 4 workers") {
  for (std::size_t threads : {1u, 2u, 4u}) {
    thread_pool pool(threads);
    CHECK(pool.run([&pool] { return fib(pool, 22); }) == 17711);
  }
}

TEST_CASE("thread_pool: idle workers steal from a busy one") {
  thread_pool pool(2);
  // Both children spin until both have started; that only ends if they run at the same time on
  // two workers, i.e. the one spawned on the root's deque was stolen by the other worker.
  std::atomic<int> started{0};
  auto both_running = [&] {
    started.fetch_add(1);
    return fibers_test::eventually([&] { return started.load() == 2; });
  };
  const bool ok = pool.run([&] {
    auto a = pool.spawn(both_running);
    auto b = pool.spawn(both_running);
    const bool ra = a.join();  // claims a inline; b is left for the thief
    return ra && b.join();
  });
  CHECK(ok);
}

TEST_CASE("thread_pool: suspended fibers migrate between worker threads and keep their state") {
  thread_pool pool(2);
  // Fibers block on an unbuffered channel and are woken by this (outside) thread: a woken fiber
  // goes to the shared queue and resumes on whichever worker takes it. Some must change threads;
  // every one must find its locals intact. Whether a given wake-up lands on the other worker is
  // up to the scheduler and the machine's load, so rounds continue past the minimum until a
  // migration has been seen, for at most 20 s; only then is "no migration" a failure.
  constexpr int fibers = 8;
  const int min_rounds = static_cast<int>(fibers_test::scaled(400, 2));
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::atomic<int> migrations{0}, corrupted{0}, resumptions{0};
  std::vector<std::unique_ptr<pools::fibers::channel<int>>> inbox;
  for (int f = 0; f < fibers; ++f) inbox.push_back(std::make_unique<pools::fibers::channel<int>>());
  pools::fibers::latch finished(fibers);
  for (int f = 0; f < fibers; ++f) {
    pool.post([&, f] {
      std::uint64_t local = 0xC0FFEE00u + static_cast<std::uint64_t>(f);
      for (int r = 0;; ++r) {
        const auto before = thread_id_now();
        const auto got = inbox[static_cast<std::size_t>(f)]->recv();
        if (!got) break;  // closed: the rounds are over
        resumptions.fetch_add(1);
        if (thread_id_now() != before) migrations.fetch_add(1);
        if (*got != r || local != 0xC0FFEE00u + static_cast<std::uint64_t>(f)) corrupted.fetch_add(1);
      }
      finished.count_down();
    });
  }
  int rounds = 0;
  while ((rounds < min_rounds || migrations.load() == 0) && std::chrono::steady_clock::now() < give_up) {
    for (int f = 0; f < fibers; ++f) inbox[static_cast<std::size_t>(f)]->send(rounds);
    ++rounds;
  }
  for (auto& ch : inbox) ch->close();
  finished.wait();
  CHECK(corrupted.load() == 0);
  CHECK(resumptions.load() == fibers * rounds);
  CHECK_MESSAGE(migrations.load() > 0, "no fiber changed threads in ", rounds, " rounds (20 s)");
  MESSAGE("migrations observed: " << migrations.load() << " of " << resumptions.load() << " resumptions in "
                                  << rounds << " rounds");
}

TEST_CASE("thread_pool: each fiber keeps its own exception state across suspension") {
  // Fiber A suspends inside a catch block; B then enters its own catch block and suspends there;
  // A resumes and leaves its handler, then B resumes and rethrows. The C++ runtime keeps the
  // stack of caught exceptions per thread; without swapping it per fiber, A would see B's
  // exception as "current" and leaving A's handler would pop B's (one worker: same thread).
  pools::fibers::pool_options o;
  o.threads = 1;
  thread_pool pool(o);
  pools::fibers::latch a_in_handler(1), b_in_handler(1), a_done(1);
  std::string a_saw, b_saw, b_rethrew;
  auto a = pool.spawn([&] {
    try {
      throw std::runtime_error("from A");
    } catch (...) {
      a_in_handler.count_down();
      b_in_handler.wait();  // B runs now, and suspends inside its handler
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::exception& e) {
        a_saw = e.what();
      }
    }
    a_done.count_down();
  });
  auto b = pool.spawn([&] {
    a_in_handler.wait();
    try {
      throw std::logic_error("from B");
    } catch (...) {
      b_in_handler.count_down();
      a_done.wait();
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::exception& e) {
        b_saw = e.what();
      }
      try {
        throw;
      } catch (const std::logic_error& e) {
        b_rethrew = e.what();
      }
    }
    CHECK(std::uncaught_exceptions() == 0);
  });
  a.join();
  b.join();
  CHECK(a_saw == "from A");
  CHECK(b_saw == "from B");
  CHECK(b_rethrew == "from B");
}

TEST_CASE("thread_pool: post reports exceptions and destruction drains blocked fibers") {
  fibers_test::reported_exceptions reports("posted failure");
  std::atomic<int> ran{0};
  pools::fibers::channel<int> ch(0);
  std::thread feeder;
  {
    thread_pool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.post([&, i] {
        if (i % 10 == 0) {
          (void)ch.recv();  // blocked until the feeder sends, after destruction has begun
          ran.fetch_add(1);
          throw std::runtime_error("posted failure");
        }
        ran.fetch_add(1);
      });
    }
    feeder = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (int i = 0; i < 10; ++i) ch.send(i);
    });
  }  // waits for the 10 blocked fibers
  feeder.join();
  CHECK(ran.load() == 100);
  CHECK(reports.seen() == 10);
}

TEST_CASE("thread_pool: fibers of one pool wait on work of another") {
  thread_pool a(1), b(1);
  const int r = a.run([&] {
    auto remote = b.spawn([] {
      pools::fibers::this_fiber::sleep_for(std::chrono::milliseconds(5));
      return 20;
    });
    return remote.join() + 1;  // a's worker is free while this fiber waits on b
  });
  CHECK(r == 21);
}
