// SPDX-License-Identifier: MIT
// Stop tokens: get_stop_token / with_stop_token, cancellable sleep and channel waits, when_all
// stopping the siblings of a failed child. Each case makes the stop happen: before the wait, while
// it waits, and racing its normal completion (counted: every wait ends exactly once).
#include <doctest/doctest.h>

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// Spins (bounded) until `counter` reaches `n`; false on time-out, so a bug fails a CHECK.
bool wait_for_count(const std::atomic<int>& counter, int n,
                    std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto end = clock_type::now() + limit;
  while (counter.load() < n) {
    if (clock_type::now() > end) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

pc::task<bool> token_is_stoppable() {
  const std::stop_token t = co_await pc::get_stop_token();
  co_return t.stop_possible();
}

pc::task<bool> nested_sees_stop() {
  co_return (co_await pc::get_stop_token()).stop_requested();
}

pc::task<bool> outer_sees_stop() {
  co_return co_await nested_sees_stop();  // the awaited task inherits this one's token
}

// Sleeps `d` under the task's token; counts how it ended.
pc::task<void> counted_sleep(pc::thread_pool& pool, std::chrono::milliseconds d, std::atomic<int>& suspended,
                             std::atomic<int>& slept, std::atomic<int>& cancelled) {
  suspended.fetch_add(1);
  try {
    co_await pc::sleep_for(pool, d);
    slept.fetch_add(1);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

}  // namespace

TEST_CASE("get_stop_token: empty outside with_stop_token; an awaited task inherits the token") {
  pc::thread_pool pool(2);
  CHECK_FALSE(pc::sync_wait(pool, token_is_stoppable()));
  std::stop_source source;
  CHECK(pc::sync_wait(pool, pc::with_stop_token(source.get_token(), token_is_stoppable())));
  CHECK_FALSE(pc::sync_wait(pool, pc::with_stop_token(source.get_token(), outer_sees_stop())));
  source.request_stop();
  CHECK(pc::sync_wait(pool, pc::with_stop_token(source.get_token(), outer_sees_stop())));
  CHECK_THROWS_AS(pc::sync_wait(pool, pc::with_stop_token(source.get_token(), pc::task<int>{})),
                  std::invalid_argument);
}

TEST_CASE("sleep under a token: a stop ends every waiting sleep at once with operation_cancelled") {
  pc::thread_pool pool(2);
  std::stop_source source;
  std::atomic<int> suspended{0}, slept{0}, cancelled{0};
  constexpr int sleepers = 100;
  for (int i = 0; i < sleepers; ++i)
    pool.spawn(
        pc::with_stop_token(source.get_token(), counted_sleep(pool, 60s, suspended, slept, cancelled)));
  REQUIRE(wait_for_count(suspended, sleepers));
  std::this_thread::sleep_for(5ms);  // let them reach the timer queue
  const auto start = clock_type::now();
  source.request_stop();  // from a thread outside the pool: the callbacks run here
  REQUIRE(wait_for_count(cancelled, sleepers));
  CHECK(clock_type::now() - start < 10s);  // not the 60 s of the sleeps
  CHECK(slept.load() == 0);
  CHECK(cancelled.load() == sleepers);
}

TEST_CASE("sleep under an already stopped token throws without suspending; unstopped sleeps complete") {
  pc::thread_pool pool(2);
  std::atomic<int> suspended{0}, slept{0}, cancelled{0};
  std::stop_source stopped;
  stopped.request_stop();
  pc::sync_wait(
      pool, pc::with_stop_token(stopped.get_token(), counted_sleep(pool, 60s, suspended, slept, cancelled)));
  pc::sync_wait(
      pool, pc::with_stop_token(stopped.get_token(), counted_sleep(pool, 0ms, suspended, slept, cancelled)));
  CHECK(cancelled.load() == 2);
  std::stop_source live;
  const auto start = clock_type::now();
  pc::sync_wait(
      pool, pc::with_stop_token(live.get_token(), counted_sleep(pool, 20ms, suspended, slept, cancelled)));
  CHECK(clock_type::now() - start >= 20ms);
  CHECK(slept.load() == 1);
  CHECK(cancelled.load() == 2);
}

TEST_CASE("sleep: a stop racing the timer resumes each sleeper exactly once") {
  // Deadlines of 0-2 ms and a stop requested about then: some sleeps end normally, some are
  // cancelled, some see the stop before suspending. Every one must end, once (a double resume
  // is a crash or a count above `n`; a lost one never reaches the count).
  pc::thread_pool pool(2);
  const int rounds = coro_test::sanitized() ? 20 : 100;
  constexpr int per_round = 20;
  std::atomic<int> suspended{0}, slept{0}, cancelled{0};
  for (int r = 0; r < rounds; ++r) {
    std::stop_source source;
    for (int i = 0; i < per_round; ++i) {
      pool.spawn(pc::with_stop_token(source.get_token(), counted_sleep(pool, std::chrono::milliseconds(i % 3),
                                                                       suspended, slept, cancelled)));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (r % 8)));
    source.request_stop();
    REQUIRE(wait_for_count(suspended, (r + 1) * per_round));
  }
  REQUIRE(wait_for_count(slept, 0));
  const auto end = clock_type::now() + 20s;
  while (slept.load() + cancelled.load() < rounds * per_round && clock_type::now() < end)
    std::this_thread::sleep_for(1ms);
  CHECK(slept.load() + cancelled.load() == rounds * per_round);
  CHECK(cancelled.load() > 0);
}

namespace {

pc::task<void> receive_one(pc::channel<int>& ch, std::atomic<int>& suspended, std::atomic<int>& got,
                           std::atomic<int>& cancelled) {
  suspended.fetch_add(1);
  try {
    std::optional<int> v = co_await ch.receive();
    if (v) got.fetch_add(1);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

pc::task<void> send_one(pc::channel<int>& ch, int v, std::atomic<int>& suspended, std::atomic<int>& sent,
                        std::atomic<int>& cancelled) {
  suspended.fetch_add(1);
  try {
    if (co_await ch.send(v)) sent.fetch_add(1);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

pc::task<int> drain(pc::channel<int>& ch) {
  int n = 0;
  ch.close();
  while (co_await ch.receive()) ++n;
  co_return n;
}

}  // namespace

TEST_CASE("channel: waiting receivers and senders are cancelled; the channel works on without them") {
  pc::thread_pool pool(2);
  pc::channel<int> ch(1);
  std::stop_source source;
  std::atomic<int> suspended{0}, done{0}, cancelled{0};
  for (int i = 0; i < 10; ++i)
    pool.spawn(pc::with_stop_token(source.get_token(), receive_one(ch, suspended, done, cancelled)));
  REQUIRE(wait_for_count(suspended, 10));
  std::this_thread::sleep_for(5ms);
  source.request_stop();
  REQUIRE(wait_for_count(cancelled, 10));
  CHECK(done.load() == 0);

  // The cancelled receivers are gone from the channel: a value sent now stays buffered.
  std::atomic<int> sent{0}, unused{0};
  pc::sync_wait(pool, send_one(ch, 1, suspended, sent, unused));
  CHECK(sent.load() == 1);
  CHECK(ch.size() == 1);

  // Full channel: senders wait; a stop cancels them and nothing of theirs is buffered.
  std::stop_source senders;
  for (int i = 0; i < 10; ++i)
    pool.spawn(pc::with_stop_token(senders.get_token(), send_one(ch, 100 + i, suspended, sent, cancelled)));
  REQUIRE(wait_for_count(suspended, 21));
  std::this_thread::sleep_for(5ms);
  senders.request_stop();
  REQUIRE(wait_for_count(cancelled, 20));
  CHECK(sent.load() == 1);
  CHECK(pc::sync_wait(pool, drain(ch)) == 1);

  // Already stopped: nothing is sent even though there is room.
  pc::channel<int> roomy(4);
  pc::sync_wait(pool,
                pc::with_stop_token(senders.get_token(), send_one(roomy, 7, suspended, sent, cancelled)));
  CHECK(cancelled.load() == 21);
  CHECK(roomy.size() == 0);
}

TEST_CASE("channel: stops racing transfers lose no value and resume each waiter once") {
  pc::thread_pool pool(2);
  const int rounds = coro_test::sanitized() ? 20 : 100;
  constexpr int pairs = 8;
  for (int r = 0; r < rounds; ++r) {
    pc::channel<int> ch(1);
    std::stop_source source;
    std::atomic<int> suspended{0}, sent{0}, received{0}, cancelled{0};
    for (int i = 0; i < pairs; ++i) {
      pool.spawn(pc::with_stop_token(source.get_token(), send_one(ch, i, suspended, sent, cancelled)));
      pool.spawn(pc::with_stop_token(source.get_token(), receive_one(ch, suspended, received, cancelled)));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100 * (r % 5)));
    source.request_stop();
    // Every operation ends once: sent, received or cancelled (a lost waiter never counts, a
    // double resume counts twice or crashes).
    std::atomic<int> ended{0};
    const auto end = clock_type::now() + 20s;
    while (sent.load() + received.load() + cancelled.load() < 2 * pairs && clock_type::now() < end)
      std::this_thread::sleep_for(100us);
    REQUIRE(sent.load() + received.load() + cancelled.load() == 2 * pairs);
    // Every value sent was received or is still buffered.
    CHECK(sent.load() - received.load() == static_cast<int>(ch.size()));
    (void)ended;
  }
}

namespace {

pc::task<int> fail_soon(pc::thread_pool& pool) {
  co_await pc::sleep_for(pool, 2ms);
  throw std::runtime_error("the real failure");
}

pc::task<int> sleep_long(pc::thread_pool& pool, std::atomic<int>& cancelled) {
  try {
    co_await pc::sleep_for(pool, 15s);  // longer than the tests' time checks (< 10 s)
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
    throw;
  }
  co_return 1;
}

pc::task<int> run_pair(pc::thread_pool& pool, std::atomic<int>& cancelled) {
  auto [a, b] = co_await pc::when_all(sleep_long(pool, cancelled), fail_soon(pool));
  co_return a + b;
}

pc::task<int> run_range(pc::thread_pool& pool, std::atomic<int>& cancelled) {
  std::vector<pc::task<int>> tasks;
  for (int i = 0; i < 4; ++i) tasks.push_back(sleep_long(pool, cancelled));
  tasks.push_back(fail_soon(pool));
  auto values = co_await pc::when_all(std::move(tasks));
  co_return static_cast<int>(values.size());
}

}  // namespace

TEST_CASE(
    "when_all under a token: a failed child stops its siblings; the failure, not a cancellation, is thrown") {
  pc::thread_pool pool(2);
  std::stop_source source;
  std::atomic<int> cancelled{0};
  const auto start = clock_type::now();
  // Child 0 (the sleeper) ends with operation_cancelled, child 1 with the failure: the failure wins.
  CHECK_THROWS_WITH_AS(
      pc::sync_wait(pool, pc::with_stop_token(source.get_token(), run_pair(pool, cancelled))),
      "the real failure", std::runtime_error);
  CHECK_THROWS_WITH_AS(
      pc::sync_wait(pool, pc::with_stop_token(source.get_token(), run_range(pool, cancelled))),
      "the real failure", std::runtime_error);
  CHECK(clock_type::now() - start < 10s);  // not the sleepers' 15 s
  CHECK(cancelled.load() == 5);
  CHECK_FALSE(source.stop_requested());  // the siblings' stop is the join's own, not the caller's
}

TEST_CASE("when_all under a token: a stop from above reaches every child") {
  pc::thread_pool pool(2);
  std::stop_source source;
  std::atomic<int> cancelled{0};
  auto both = [](pc::thread_pool& p, std::atomic<int>& c) -> pc::task<int> {
    auto [a, b] = co_await pc::when_all(sleep_long(p, c), sleep_long(p, c));
    co_return a + b;
  };
  std::thread stopper([&] {
    std::this_thread::sleep_for(20ms);
    source.request_stop();
  });
  CHECK_THROWS_AS(pc::sync_wait(pool, pc::with_stop_token(source.get_token(), both(pool, cancelled))),
                  pc::operation_cancelled);
  stopper.join();
  CHECK(cancelled.load() == 2);
}

namespace {

pc::task<void> wait_event(const pc::async_event& e, std::atomic<int>& suspended, std::atomic<int>& released,
                          std::atomic<int>& cancelled) {
  suspended.fetch_add(1);
  try {
    co_await e;
    released.fetch_add(1);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

}  // namespace

TEST_CASE(
    "async_event under a token: a stop ends the wait; set() releases the others; a set event does not wait") {
  pc::thread_pool pool(2);
  pc::async_event event;
  std::stop_source stopped_ones;
  std::atomic<int> suspended{0}, released{0}, cancelled{0};
  for (int i = 0; i < 20; ++i) {
    // Even: cancellable; odd: plain waits (no token) on the lock-free stack.
    if (i % 2 == 0) {
      pool.spawn(
          pc::with_stop_token(stopped_ones.get_token(), wait_event(event, suspended, released, cancelled)));
    } else {
      pool.spawn(wait_event(event, suspended, released, cancelled));
    }
  }
  REQUIRE(wait_for_count(suspended, 20));
  std::this_thread::sleep_for(5ms);
  stopped_ones.request_stop();
  REQUIRE(wait_for_count(cancelled, 10));
  CHECK(released.load() == 0);
  event.set();
  REQUIRE(wait_for_count(released, 10));
  CHECK(cancelled.load() == 10);
  // Set: returns at once, even under a stopped token (nothing to wait for).
  pc::sync_wait(
      pool, pc::with_stop_token(stopped_ones.get_token(), wait_event(event, suspended, released, cancelled)));
  CHECK(released.load() == 11);
  // Not set, token already stopped: cancelled without waiting.
  event.reset();
  pc::sync_wait(
      pool, pc::with_stop_token(stopped_ones.get_token(), wait_event(event, suspended, released, cancelled)));
  CHECK(cancelled.load() == 11);
}

TEST_CASE("async_event: stops racing set() resume each waiter exactly once") {
  pc::thread_pool pool(2);
  const int rounds = coro_test::sanitized() ? 30 : 200;
  constexpr int waiters = 10;
  for (int r = 0; r < rounds; ++r) {
    pc::async_event event;
    std::stop_source source;
    std::atomic<int> suspended{0}, released{0}, cancelled{0};
    for (int i = 0; i < waiters; ++i)
      pool.spawn(pc::with_stop_token(source.get_token(), wait_event(event, suspended, released, cancelled)));
    std::thread stopper([&] { source.request_stop(); });
    if (r % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * (r % 7)));
    event.set();
    stopper.join();
    const auto end = clock_type::now() + 20s;
    while (released.load() + cancelled.load() < waiters && clock_type::now() < end)
      std::this_thread::sleep_for(50us);
    REQUIRE(released.load() + cancelled.load() == waiters);
    // The event outlives its waiters here: wait until all have left their co_await.
    REQUIRE(wait_for_count(suspended, waiters));
  }
}

namespace {

pc::task<void> lock_and_count(pc::async_mutex& m, int& shared, std::atomic<int>& suspended,
                              std::atomic<int>& locked, std::atomic<int>& cancelled) {
  suspended.fetch_add(1);
  try {
    auto guard = co_await m.scoped_lock();
    ++shared;  // a data race here (TSan) if the mutex let two in
    locked.fetch_add(1);
  } catch (const pc::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

pc::task<void> hold(pc::async_mutex& m, pc::async_event& release, std::atomic<bool>& holding) {
  auto guard = co_await m.scoped_lock();
  holding.store(true);
  co_await release;
}

}  // namespace

TEST_CASE("async_mutex under a token: a stop ends the wait; the lock goes past cancelled waiters, in order") {
  pc::thread_pool pool(2);
  pc::async_mutex mutex;
  pc::async_event release;
  std::atomic<bool> holding{false};
  pool.spawn(hold(mutex, release, holding));
  REQUIRE(coro_test::wait_for_flag(holding));
  std::stop_source stopped_ones;
  int shared = 0;
  std::atomic<int> suspended{0}, locked{0}, cancelled{0};
  for (int i = 0; i < 20; ++i) {  // even: cancellable; odd: plain waits
    if (i % 2 == 0) {
      pool.spawn(pc::with_stop_token(stopped_ones.get_token(),
                                     lock_and_count(mutex, shared, suspended, locked, cancelled)));
    } else {
      pool.spawn(lock_and_count(mutex, shared, suspended, locked, cancelled));
    }
  }
  REQUIRE(wait_for_count(suspended, 20));
  std::this_thread::sleep_for(5ms);
  stopped_ones.request_stop();
  REQUIRE(wait_for_count(cancelled, 10));  // at once, while the lock is still held
  CHECK(locked.load() == 0);
  release.set();  // the holder unlocks: the 10 plain waiters get the lock, the cancelled nodes are skipped
  REQUIRE(wait_for_count(locked, 10));
  CHECK(shared == 10);
  CHECK(mutex.try_lock());  // free again: nobody holds it, nobody waits
  mutex.unlock();
  // Free lock: taken at once, even under a stopped token (nothing to wait for).
  pc::sync_wait(pool, pc::with_stop_token(stopped_ones.get_token(),
                                          lock_and_count(mutex, shared, suspended, locked, cancelled)));
  CHECK(locked.load() == 11);
}

TEST_CASE("async_mutex: stops racing unlock() never lose the lock and resume each waiter once") {
  pc::thread_pool pool(2);
  const int rounds = coro_test::sanitized() ? 30 : 200;
  constexpr int waiters = 8;
  int shared = 0;
  int total_locked = 0;
  for (int r = 0; r < rounds; ++r) {
    pc::async_mutex mutex;
    std::stop_source source;
    std::atomic<int> suspended{0}, locked{0}, cancelled{0};
    for (int i = 0; i < waiters; ++i)
      pool.spawn(pc::with_stop_token(source.get_token(),
                                     lock_and_count(mutex, shared, suspended, locked, cancelled)));
    if (r % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * (r % 7)));
    source.request_stop();
    const auto end = clock_type::now() + 20s;
    while (locked.load() + cancelled.load() < waiters && clock_type::now() < end)
      std::this_thread::sleep_for(50us);
    REQUIRE(locked.load() + cancelled.load() == waiters);
    total_locked += locked.load();
    // The lock is free at the end: no grant was lost to a cancelled waiter.
    const auto free_by = clock_type::now() + 20s;
    while (!mutex.try_lock() && clock_type::now() < free_by) std::this_thread::sleep_for(50us);
    mutex.unlock();
  }
  CHECK(shared == total_locked);
}

// A stop that races the wake-up of a waiter whose wake-up also frees its sibling: the sibling (a
// plain waiter, resumed inline here) destroys the latch or the channel at once, while the stop's
// on_stop may be on its way to that object's mutex. The waker deregisters the stop callbacks of
// the waiters it took before it resumes anyone, so no on_stop touches the object afterwards.
// ASan reports a use after free within a few dozen rounds when it does not.
namespace {
// Both waiters are suspended before the stopper starts; then the stop and the wake-up race.
template <class Wake>
void race_stop_with_wake(std::stop_source& source, Wake wake, int round) {
  std::atomic<int> ready{0};
  std::thread stopper([&] {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (int k = 0; k < round % 64; ++k) std::atomic_signal_fence(std::memory_order_seq_cst);  // jitter
    source.request_stop();
  });
  ready.fetch_add(1);
  while (ready.load() < 2) {
  }
  wake();
  stopper.join();
}
}  // namespace

TEST_CASE("cancellation: a stop racing count_down never touches a latch its plain waiter destroyed") {
  for (int round = 0; round < 400; ++round) {
    auto* latch = new pc::async_latch(1);
    auto plain = [](pc::async_latch* l) -> pc::task<void> {
      co_await *l;
      delete l;
    };
    auto cancellable = [](pc::async_latch* l) -> pc::task<void> {
      try {
        co_await *l;
      } catch (const pc::operation_cancelled&) {
      }
    };
    std::stop_source source;
    pc::task<void> first = plain(latch);
    first.handle().resume();  // waits outside any pool: resumed inline by count_down
    pc::task<void> second = pc::with_stop_token(source.get_token(), cancellable(latch));
    second.handle().resume();
    race_stop_with_wake(source, [&] { latch->count_down(); }, round);
  }
}

TEST_CASE("cancellation: a stop racing close() never touches a channel its plain receiver destroyed") {
  using channel = pc::channel<int>;
  for (int round = 0; round < 400; ++round) {
    auto* ch = new channel(1);
    auto plain = [](channel* c) -> pc::task<void> {
      if (!co_await c->receive()) delete c;  // closed: the last user tears it down
    };
    auto cancellable = [](channel* c) -> pc::task<void> {
      try {
        (void)co_await c->receive();
      } catch (const pc::operation_cancelled&) {
      }
    };
    std::stop_source source;
    pc::task<void> first = plain(ch);
    first.handle().resume();  // queued first: close() resumes it first
    pc::task<void> second = pc::with_stop_token(source.get_token(), cancellable(ch));
    second.handle().resume();
    race_stop_with_wake(source, [&] { ch->close(); }, round);
  }
}

// A cancellable wait that arrives while set() runs on another thread either finds the event set,
// waits on the list set() takes, or (between the two) waits for set()'s publication as a plain
// waiter; in no case may it go on, and delete the latch, before set() has finished with it.
TEST_CASE("cancellation: a cancellable wait racing set() never lets its task destroy the event under set()") {
  for (int round = 0; round < 500; ++round) {
    auto* latch = new pc::async_latch(1);
    auto waiter = [](pc::async_latch* l) -> pc::task<void> {
      co_await *l;
      delete l;
    };
    std::stop_source source;  // never stopped: the wait is cancellable, and ends by set()
    pc::task<void> t = pc::with_stop_token(source.get_token(), waiter(latch));
    std::atomic<bool> go{false};
    std::thread setter([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      latch->count_down();
    });
    go.store(true, std::memory_order_release);
    t.handle().resume();  // waits outside any pool: set() resumes it inline if it suspends
    setter.join();
    CHECK(t.handle().done());
  }
}

// A thread that never waited on the channel sees it closed (is_closed(), or a send that fails) and
// destroys it at once, while close() runs on another thread and a stop races it. A cancellable
// receiver's on_stop may be on its way to the channel's mutex when close() takes the receiver, so
// "closed" must not be visible until close() has deregistered it: ASan reports a use after free
// (TSan a race with the free) within a few dozen rounds when it is.
TEST_CASE("cancellation: a channel seen closed may be destroyed while a stop races close()") {
  using channel = pc::channel<int>;
  for (int round = 0; round < 1000; ++round) {
    auto* ch = new channel(1);
    auto cancellable = [](channel* c) -> pc::task<void> {
      try {
        (void)co_await c->receive();
      } catch (const pc::operation_cancelled&) {
      }
    };
    std::stop_source source;
    pc::task<void> t = pc::with_stop_token(source.get_token(), cancellable(ch));
    t.handle().resume();  // waits outside any pool: resumed inline by close() or by the stop
    std::atomic<int> ready{0};
    std::thread stopper([&] {
      ready.fetch_add(1);
      while (ready.load() < 3) {
      }
      for (int k = 0; k < round % 64; ++k) std::atomic_signal_fence(std::memory_order_seq_cst);  // jitter
      source.request_stop();
    });
    std::thread closer([&] {
      ready.fetch_add(1);
      while (ready.load() < 3) {
      }
      ch->close();
    });
    ready.fetch_add(1);
    while (!ch->is_closed()) {
    }
    delete ch;
    stopper.join();
    closer.join();
    CHECK(t.handle().done());
  }
}
