// SPDX-License-Identifier: MIT
// textbook_pool: the variant's task<T>, when_all and sync_wait running unchanged on the pool with
// one shared queue; schedule(); spawn; draining (including suspended spawned tasks); the async
// primitives handing waiters back to this pool. (The Executor contract itself is checked by the
// conformance suite, which runs over textbook_pool too.)
#include <doctest/doctest.h>

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/testing/zero_threads.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;

namespace {

using coro_test::fib;
using coro_test::value;

pc::task<int> fails_with(std::string why) {
  throw std::runtime_error(why);
  co_return 0;
}

// Records the thread each child ran on; the set shows whether the children spread out.
pc::task<void> note_thread(std::mutex& m, std::set<std::thread::id>& seen) {
  std::this_thread::sleep_for(2ms);  // long enough for another thread to take a sibling
  std::lock_guard lock(m);
  seen.insert(std::this_thread::get_id());
  co_return;
}

std::atomic<int> reported{0};
void count_report(std::exception_ptr) noexcept {
  reported.fetch_add(1);
}

}  // namespace

TEST_CASE("textbook_pool: a thread count of 0 starts one thread per hardware thread") {
  pools::testing::check_zero_threads_means_every_core([] { return pc::textbook_pool(0); });
}

TEST_CASE("textbook_pool: construction and concurrency") {
  pc::textbook_pool pool(3);
  CHECK(pool.concurrency() == 3);
  CHECK_FALSE(pool.on_worker_thread());
  CHECK(pc::current_scheduler() == nullptr);
}

TEST_CASE("textbook_pool: fib through task, when_all and sync_wait, on 1, 2 and 4 threads") {
  for (std::size_t threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    pc::textbook_pool pool(threads);
    CHECK(pc::sync_wait(pool, fib(1)) == 1);
    CHECK(pc::sync_wait(pool, fib(15)) == 610);
    CHECK(pc::sync_wait(pool, fib(20)) == 6765);
  }
}

TEST_CASE("textbook_pool: nested when_all, tuples and ranges, void children") {
  pc::textbook_pool pool(2);
  auto inner = [](int base) -> pc::task<int> {
    std::vector<pc::task<int>> parts;
    for (int i = 0; i < 10; ++i) parts.push_back(value(base + i));
    int sum = 0;
    for (int v : co_await pc::when_all(std::move(parts))) sum += v;
    co_return sum;
  };
  auto outer = [&]() -> pc::task<int> {
    std::atomic<int> ran{0};
    auto touch = [](std::atomic<int>& r) -> pc::task<void> {
      r.fetch_add(1);
      co_return;
    };
    auto [a, b, nothing] = co_await pc::when_all(inner(0), inner(100), touch(ran));
    static_assert(std::is_same_v<decltype(nothing), std::monostate>);
    std::vector<pc::task<void>> voids;
    for (int i = 0; i < 5; ++i) voids.push_back(touch(ran));
    co_await pc::when_all(std::move(voids));
    co_return a + b + ran.load();
  };
  CHECK(pc::sync_wait(pool, outer()) == 45 + 1045 + 6);
}

TEST_CASE("textbook_pool: forked children run on more than one thread") {
  pc::textbook_pool pool(2);
  std::mutex m;
  std::set<std::thread::id> seen;
  auto parent = [](std::mutex& mx, std::set<std::thread::id>& s) -> pc::task<void> {
    std::vector<pc::task<void>> children;
    for (int i = 0; i < 32; ++i) children.push_back(note_thread(mx, s));
    co_await pc::when_all(std::move(children));
  };
  pc::sync_wait(pool, parent(m, seen));
  CHECK(seen.size() == 2);
  CHECK(seen.count(std::this_thread::get_id()) == 0);  // none on the caller of sync_wait
}

TEST_CASE("textbook_pool: exceptions cross task, when_all and sync_wait with type and message") {
  pc::textbook_pool pool(2);
  SUBCASE("from a task to sync_wait") {
    CHECK_THROWS_WITH_AS(pc::sync_wait(pool, fails_with("direct")), "direct", std::runtime_error);
  }
  SUBCASE("through co_await, caught by the awaiting task") {
    auto outer = []() -> pc::task<std::string> {
      try {
        co_await fails_with("inner");
      } catch (const std::runtime_error& e) {
        co_return std::string("caught ") + e.what();
      }
      co_return "not caught";
    };
    CHECK(pc::sync_wait(pool, outer()) == "caught inner");
  }
  SUBCASE("from when_all: every child runs, the lowest-numbered failure wins") {
    std::atomic<int> ran{0};
    auto counted = [](std::atomic<int>& r, int v) -> pc::task<int> {
      r.fetch_add(1);
      co_return v;
    };
    auto outer = [&]() -> pc::task<int> {
      auto [a, b, c, d] =
          co_await pc::when_all(counted(ran, 1), fails_with("second"), counted(ran, 3), fails_with("fourth"));
      co_return a + b + c + d;
    };
    CHECK_THROWS_WITH_AS(pc::sync_wait(pool, outer()), "second", std::runtime_error);
    CHECK(ran.load() == 2);
  }
}

namespace {

// A coroutine that starts at once on the calling thread and destroys its own frame at its end: it
// lets a test watch schedule() move it from that thread onto the pool.
struct eager_coroutine {
  struct promise_type {
    eager_coroutine get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() const noexcept { return {}; }
    std::suspend_never final_suspend() const noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

struct where {
  bool on_pool_before = true;
  std::thread::id after;
  bool on_pool_after = false;
};

// Reads the thread id only after the suspension: Clang may reuse a pthread_self() result from
// before a co_await (glibc declares it __attribute__((const))), though the thread has changed.
eager_coroutine hop(pc::textbook_pool& p, std::promise<where>& out) {
  where w;
  w.on_pool_before = p.on_worker_thread();
  co_await p.schedule();  // queues this coroutine and returns to the caller of hop()
  w.after = std::this_thread::get_id();
  w.on_pool_after = p.on_worker_thread() && pc::current_scheduler() == &p;
  out.set_value(w);  // the last touch of `out`; the frame then destroys itself on the pool thread
}

}  // namespace

TEST_CASE("textbook_pool: schedule() moves the coroutine onto a pool thread") {
  pc::textbook_pool pool(2);
  SUBCASE("from outside the pool") {
    std::promise<where> result;
    hop(pool, result);  // runs here up to schedule()
    const where w = result.get_future().get();
    CHECK_FALSE(w.on_pool_before);  // hop() started here, on the test's thread
    CHECK(w.after != std::this_thread::get_id());
    CHECK(w.on_pool_after);
  }
  SUBCASE("on a pool thread it is a yield: the coroutine goes behind the queued work") {
    pc::textbook_pool one(1);
    auto yielder = [](pc::textbook_pool& p) -> pc::task<std::vector<int>> {
      std::vector<int> order;
      std::mutex m;
      for (int i = 0; i < 3; ++i) {
        p.post([&order, &m, i] {
          std::lock_guard lock(m);
          order.push_back(i);
        });
      }
      co_await p.schedule();  // one thread, FIFO: the three posts run before we resume
      std::lock_guard lock(m);
      order.push_back(99);
      co_return order;
    };
    CHECK(pc::sync_wait(one, yielder(one)) == std::vector<int>{0, 1, 2, 99});
  }
}

TEST_CASE("textbook_pool: sync_wait on a thread of the same pool is refused") {
  pc::textbook_pool pool(1);
  std::promise<std::string> outcome;
  pool.post([&] {
    try {
      pc::sync_wait(pool, value(1));
      outcome.set_value("no error");
    } catch (const std::logic_error&) {
      outcome.set_value("logic_error");
    }
  });
  CHECK(outcome.get_future().get() == "logic_error");
}

TEST_CASE("textbook_pool: spawn detaches a task; exceptions are reported; empty tasks refused") {
  reported = 0;
  auto previous = pools::set_unhandled_exception_handler(&count_report);
  std::atomic<int> finished{0};
  {
    pc::textbook_pool pool(2);
    auto job = [](std::atomic<int>& f, bool fail) -> pc::task<int> {
      f.fetch_add(1);
      if (fail) throw std::runtime_error("spawned task failed");
      co_return 5;
    };
    for (int i = 0; i < 100; ++i) pool.spawn(job(finished, i % 2 == 0));
    CHECK_THROWS_AS(pool.spawn(pc::task<int>{}), std::invalid_argument);
    pool.post([] { throw std::runtime_error("posted task failed"); });
  }  // drains
  CHECK(finished.load() == 100);
  CHECK(reported.load() == 51);
  pools::set_unhandled_exception_handler(previous);
}

TEST_CASE("textbook_pool: the destructor drains queued work and work posted while draining") {
  std::atomic<int> ran{0};
  {
    pc::textbook_pool pool(2);
    for (int i = 0; i < 1000; ++i) {
      pool.post([&pool, &ran] {
        ran.fetch_add(1);
        pool.post([&ran] { ran.fetch_add(1); });  // posted by a task, maybe while draining
      });
    }
  }
  CHECK(ran.load() == 2000);
}

TEST_CASE("textbook_pool: the destructor waits for spawned tasks that are suspended (in no queue)") {
  std::atomic<int> woke{0};
  coro_test::lifetime_probe::reset();
  pc::async_event go;
  std::thread setter;
  {
    pc::textbook_pool pool(2);
    auto waiter = [](pc::async_event& e, std::atomic<int>& w, coro_test::lifetime_probe) -> pc::task<void> {
      co_await e;
      w.fetch_add(1);
    };
    for (int i = 0; i < 10; ++i) pool.spawn(waiter(go, woke, coro_test::lifetime_probe{}));
    // Set the event only once the destructor is (very likely) already waiting: its threads see
    // an empty queue, and only the count of unfinished coroutines keeps them.
    setter = std::thread([&go] {
      std::this_thread::sleep_for(50ms);
      go.set();
    });
  }
  setter.join();
  CHECK(woke.load() == 10);
  CHECK(coro_test::lifetime_probe::alive.load() == 0);  // every frame was destroyed
}

TEST_CASE("textbook_pool: async_event and async_latch hand waiters back to this pool") {
  pc::textbook_pool pool(2);
  pc::async_event event;
  pc::async_latch waiting(50), done(50);
  std::atomic<int> on_pool{0};
  auto waiter = [](pc::textbook_pool& p, pc::async_event& e, pc::async_latch& w, pc::async_latch& d,
                   std::atomic<int>& ok) -> pc::task<void> {
    w.count_down();
    co_await e;  // set() from the main thread: the waiter is enqueued on p, not resumed there
    if (p.on_worker_thread()) ok.fetch_add(1);
    d.count_down();
  };
  for (int i = 0; i < 50; ++i) pool.spawn(waiter(pool, event, waiting, done, on_pool));
  auto wait_on = [](pc::async_latch& l) -> pc::task<void> { co_await l; };
  pc::sync_wait(pool, wait_on(waiting));
  event.set();
  pc::sync_wait(pool, wait_on(done));
  CHECK(on_pool.load() == 50);
}

TEST_CASE("textbook_pool: async_mutex serialises coroutines on several threads") {
  pc::textbook_pool pool(4);
  pc::async_mutex mutex;
  std::int64_t counter = 0;  // plain: the mutex alone protects it (TSan checks)
  const int tasks = coro_test::sanitized() ? 50 : 200;
  auto bump = [](pc::textbook_pool& p, pc::async_mutex& m, std::int64_t& c) -> pc::task<void> {
    for (int i = 0; i < 20; ++i) {
      auto guard = co_await m.scoped_lock();
      ++c;
      co_await p.schedule();  // yield while holding the lock: others queue up on it
    }
  };
  auto all = [&]() -> pc::task<void> {
    std::vector<pc::task<void>> workers;
    for (int i = 0; i < tasks; ++i) workers.push_back(bump(pool, mutex, counter));
    co_await pc::when_all(std::move(workers));
  };
  pc::sync_wait(pool, all());
  CHECK(counter == std::int64_t{tasks} * 20);
  CHECK(mutex.try_lock());
  mutex.unlock();
}

TEST_CASE("textbook_pool: a channel between producers and consumers") {
  pc::textbook_pool pool(2);
  pc::channel<int> ch(4);  // small: producers wait for room
  auto producer = [](pc::channel<int>& c, int first) -> pc::task<void> {
    for (int i = first; i < first + 500; ++i) co_await c.send(i);
  };
  auto consumer = [](pc::channel<int>& c) -> pc::task<std::int64_t> {
    std::int64_t sum = 0;
    while (std::optional<int> v = co_await c.receive()) sum += *v;
    co_return sum;
  };
  auto run = [&]() -> pc::task<std::int64_t> {
    auto producers = [](pc::channel<int>& c, auto& make) -> pc::task<void> {
      co_await pc::when_all(make(c, 0), make(c, 500));
      c.close();  // both done: the consumers drain and stop
    };
    auto [none, a, b] = co_await pc::when_all(producers(ch, producer), consumer(ch), consumer(ch));
    (void)none;
    co_return a + b;
  };
  CHECK(pc::sync_wait(pool, run()) == std::int64_t{999} * 1000 / 2);
}
