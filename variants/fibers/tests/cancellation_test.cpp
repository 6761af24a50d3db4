// SPDX-License-Identifier: MIT
// Stop tokens on fibers: spawn(token, f) and this_fiber::get_stop_token(); sleep, channel,
// future, condition_variable, latch and wait_group waits that end with operation_cancelled. Each
// case makes the stop happen — before the wait, while it waits, and racing its normal completion
// — and counts every fiber: each wait ends exactly once, and no value is lost or doubled.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/future.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/operation_cancelled.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/fibers/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <vector>

#include "test_support.hpp"

namespace pf = pools::fibers;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using fibers_test::eventually;

namespace {

bool token_stoppable() {
  return pf::this_fiber::get_stop_token().stop_possible();
}

// Sleeps `d` under the fiber's token; counts how it ended.
void counted_sleep(std::chrono::milliseconds d, std::atomic<int>& started, std::atomic<int>& slept,
                   std::atomic<int>& cancelled) {
  started.fetch_add(1);
  try {
    pf::this_fiber::sleep_for(d);
    slept.fetch_add(1);
  } catch (const pf::operation_cancelled&) {
    cancelled.fetch_add(1);
  }
}

}  // namespace

TEST_CASE("stop token: spawn(token, f) runs f and what it calls under the token; other fibers under none") {
  pf::thread_pool pool(2);
  std::stop_source source;
  CHECK_FALSE(pool.run([] { return token_stoppable(); }));
  CHECK(pool.spawn(source.get_token(), [] { return token_stoppable(); }).join());
  CHECK_FALSE(pf::this_fiber::get_stop_token().stop_possible());  // a plain thread has none

  // A child spawned by a fiber under a token runs under none, whether its joiner runs it inline
  // (joined at once) or a worker does; the parent's token is back after the join either way.
  auto parent = pool.spawn(source.get_token(), [&pool] {
    int children_with_token = 0;
    for (int i = 0; i < 200; ++i) {
      auto child = pool.spawn([] { return token_stoppable(); });
      if (i % 2 == 0) pf::this_fiber::yield();  // let a worker take some of them
      children_with_token += child.join() ? 1 : 0;
      if (!token_stoppable()) return -1;
    }
    return children_with_token;
  });
  CHECK(parent.join() == 0);

  // post(token, f) too; and the token is the one given, so a stop is seen through it.
  std::atomic<int> seen{0};
  pf::latch posted(1);
  pool.post(source.get_token(), [&] {
    source.request_stop();
    if (pf::this_fiber::get_stop_token().stop_requested()) seen.fetch_add(1);
    posted.count_down();
  });
  posted.wait();
  CHECK(seen.load() == 1);
}

TEST_CASE("sleep under a token: a stop ends every waiting sleep at once with operation_cancelled") {
  pf::thread_pool pool(2);
  std::stop_source source;
  std::atomic<int> started{0}, slept{0}, cancelled{0};
  const int sleepers = 50;
  std::vector<pf::join_handle<void>> fibers;
  for (int i = 0; i < sleepers; ++i)
    fibers.push_back(pool.spawn(source.get_token(), [&] { counted_sleep(60s, started, slept, cancelled); }));
  REQUIRE(eventually([&] { return started.load() == sleepers; }));
  std::this_thread::sleep_for(5ms);  // let them reach the timer queue
  const auto start = clock_type::now();
  source.request_stop();  // from a thread outside the pool: the callbacks run here
  for (auto& f : fibers) f.join();
  CHECK(clock_type::now() - start < 10s);  // not the 60 s of the sleeps
  CHECK(slept.load() == 0);
  CHECK(cancelled.load() == sleepers);
}

TEST_CASE("sleep under an already stopped token throws without suspending, also for a past deadline") {
  pf::thread_pool pool(2);
  std::atomic<int> started{0}, slept{0}, cancelled{0};
  std::stop_source stopped;
  stopped.request_stop();
  pool.spawn(stopped.get_token(), [&] { counted_sleep(60s, started, slept, cancelled); }).join();
  pool.spawn(stopped.get_token(), [&] { counted_sleep(0ms, started, slept, cancelled); }).join();
  CHECK(cancelled.load() == 2);
  std::stop_source live;
  const auto start = clock_type::now();
  pool.spawn(live.get_token(), [&] { counted_sleep(20ms, started, slept, cancelled); }).join();
  CHECK(clock_type::now() - start >= 20ms);
  CHECK(slept.load() == 1);
  CHECK(cancelled.load() == 2);
}

TEST_CASE("sleep: a stop racing the timer ends each sleeper exactly once") {
  // Deadlines of 0-2 ms and a stop requested about then: some sleeps end normally, some are
  // cancelled, some see the stop before they suspend. Every one must end once: a double wake is
  // a crash or a count above the total, a lost one never joins.
  pf::thread_pool pool(2);
  const int rounds = fibers_test::sanitized() ? 20 : 100;
  constexpr int per_round = 20;
  std::atomic<int> started{0}, slept{0}, cancelled{0};
  for (int r = 0; r < rounds; ++r) {
    std::stop_source source;
    std::vector<pf::join_handle<void>> fibers;
    for (int i = 0; i < per_round; ++i) {
      fibers.push_back(pool.spawn(source.get_token(), [&, i] {
        counted_sleep(std::chrono::milliseconds(i % 3), started, slept, cancelled);
      }));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (r % 8)));
    source.request_stop();
    for (auto& f : fibers) f.join();
  }
  CHECK(started.load() == rounds * per_round);
  CHECK(slept.load() + cancelled.load() == rounds * per_round);
  CHECK(cancelled.load() > 0);
}

TEST_CASE("channel: waiting receivers and senders are cancelled; the channel works on without them") {
  pf::thread_pool pool(2);
  pf::channel<int> ch(1);
  std::stop_source receivers;
  std::atomic<int> started{0}, got{0}, cancelled{0};
  std::vector<pf::join_handle<void>> fibers;
  for (int i = 0; i < 10; ++i) {
    fibers.push_back(pool.spawn(receivers.get_token(), [&] {
      started.fetch_add(1);
      try {
        if (ch.recv()) got.fetch_add(1);
      } catch (const pf::operation_cancelled&) {
        cancelled.fetch_add(1);
      }
    }));
  }
  REQUIRE(eventually([&] { return started.load() == 10; }));
  std::this_thread::sleep_for(5ms);
  receivers.request_stop();
  for (auto& f : fibers) f.join();
  CHECK(cancelled.load() == 10);
  CHECK(got.load() == 0);

  // The cancelled receivers are gone from the channel: a value sent now stays buffered.
  CHECK(ch.send(1) == pf::channel_op_status::success);
  // Full channel: senders wait; a stop cancels them and nothing of theirs is buffered.
  std::stop_source senders;
  fibers.clear();
  started = 0;
  cancelled = 0;
  for (int i = 0; i < 5; ++i) {
    fibers.push_back(pool.spawn(senders.get_token(), [&, i] {
      started.fetch_add(1);
      try {
        ch.send(100 + i);
      } catch (const pf::operation_cancelled&) {
        cancelled.fetch_add(1);
      }
    }));
  }
  REQUIRE(eventually([&] { return started.load() == 5; }));
  std::this_thread::sleep_for(5ms);
  senders.request_stop();
  for (auto& f : fibers) f.join();
  CHECK(cancelled.load() == 5);
  ch.close();
  CHECK(ch.recv() == 1);  // only the value sent before
  CHECK_FALSE(ch.recv().has_value());

  // Stopped before the call: throws even with room to send or a value to take; nothing moves.
  pf::channel<int> roomy(4);
  CHECK(roomy.send(7) == pf::channel_op_status::success);
  std::stop_source stopped;
  stopped.request_stop();
  auto attempt = pool.spawn(stopped.get_token(), [&] {
    int thrown = 0;
    try {
      roomy.send(8);
    } catch (const pf::operation_cancelled&) {
      ++thrown;
    }
    try {
      (void)roomy.recv();
    } catch (const pf::operation_cancelled&) {
      ++thrown;
    }
    return thrown;
  });
  CHECK(attempt.join() == 2);
  int out = 0;
  CHECK(roomy.try_recv(out) == pf::channel_op_status::success);
  CHECK(out == 7);
  CHECK(roomy.try_recv(out) == pf::channel_op_status::empty);
}

TEST_CASE("channel: stops racing transfers lose no value, double none, and end each operation once") {
  // Producers send under tokens stopped at varying moments; consumers receive under their own.
  // Every value is either sent (counted) or cancelled (counted), and every sent value is received
  // exactly once — by a consumer, or by the drain at the end.
  pf::thread_pool pool(2);
  const int rounds = fibers_test::sanitized() ? 20 : 100;
  constexpr int producers = 4, consumers = 4, per_producer = 25;
  long long sent_sum = 0, received_sum = 0;
  int sent = 0, send_cancelled = 0, received = 0, recv_cancelled = 0;
  for (int r = 0; r < rounds; ++r) {
    pf::channel<int> ch(r % 3);  // unbuffered, 1 and 2
    std::stop_source stop_producers, stop_consumers;
    std::atomic<int> s{0}, sc{0}, g{0}, gc{0};
    std::atomic<long long> ssum{0}, gsum{0};
    std::vector<pf::join_handle<void>> fibers;
    for (int p = 0; p < producers; ++p) {
      fibers.push_back(pool.spawn(stop_producers.get_token(), [&, p] {
        for (int i = 0; i < per_producer; ++i) {
          const int v = p * 1000 + i + 1;
          try {
            if (ch.send(v) == pf::channel_op_status::success) {
              s.fetch_add(1);
              ssum.fetch_add(v);
            }
          } catch (const pf::operation_cancelled&) {
            sc.fetch_add(1);
          }
        }
      }));
    }
    for (int c = 0; c < consumers; ++c) {
      fibers.push_back(pool.spawn(stop_consumers.get_token(), [&] {
        for (;;) {
          try {
            const std::optional<int> v = ch.recv();
            if (!v) return;
            g.fetch_add(1);
            gsum.fetch_add(*v);
          } catch (const pf::operation_cancelled&) {
            gc.fetch_add(1);
            return;
          }
        }
      }));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50 * (r % 10)));
    if (r % 2 == 0) {
      stop_producers.request_stop();
      stop_consumers.request_stop();
    } else {
      stop_consumers.request_stop();
      stop_producers.request_stop();
    }
    for (std::size_t i = 0; i < producers; ++i) fibers[i].join();  // every send has ended
    ch.close();
    for (std::size_t i = producers; i < fibers.size(); ++i) fibers[i].join();
    int drained = 0;
    while (const auto v = ch.recv()) {
      ++drained;
      gsum.fetch_add(*v);
    }
    CHECK(s.load() + sc.load() == producers * per_producer);
    CHECK(g.load() + drained == s.load());
    CHECK(gsum.load() == ssum.load());
    sent += s.load();
    send_cancelled += sc.load();
    received += g.load() + drained;
    recv_cancelled += gc.load();
    sent_sum += ssum.load();
    received_sum += gsum.load();
  }
  CHECK(sent == received);
  CHECK(sent_sum == received_sum);
  CHECK(send_cancelled > 0);  // the stops did happen while values were moving
  CHECK(recv_cancelled > 0);
}

TEST_CASE("future: get, wait and wait_for end with operation_cancelled; the future stays valid") {
  pf::thread_pool pool(2);
  pf::promise<int> p;
  pf::future<int> f = p.get_future();
  std::stop_source source;
  std::atomic<int> started{0}, cancelled{0};
  auto waiter = pool.spawn(source.get_token(), [&] {
    started.fetch_add(1);
    for (int kind = 0; kind < 3; ++kind) {
      try {
        if (kind == 0) (void)f.get();
        if (kind == 1) f.wait();
        if (kind == 2) (void)f.wait_for(60s);
      } catch (const pf::operation_cancelled&) {
        cancelled.fetch_add(1);
      }
    }
    return f.valid();
  });
  REQUIRE(eventually([&] { return started.load() == 1; }));
  std::this_thread::sleep_for(5ms);
  source.request_stop();  // the get() waiting now ends; wait() and wait_for() then throw at once
  CHECK(waiter.join());
  CHECK(cancelled.load() == 3);
  // A ready result is returned even under a stopped token: nothing to wait for.
  p.set_value(42);
  CHECK(pool.spawn(source.get_token(), [&] { return f.get(); }).join() == 42);
}

TEST_CASE("future: stops racing set_value wake each reader once, with the value or cancelled") {
  pf::thread_pool pool(2);
  const int rounds = fibers_test::sanitized() ? 100 : 500;
  int values = 0, cancelled = 0;
  for (int r = 0; r < rounds; ++r) {
    pf::promise<int> p;
    pf::future<int> f = p.get_future();
    std::stop_source source;
    auto reader = pool.spawn(source.get_token(), [&] {
      try {
        return f.get();
      } catch (const pf::operation_cancelled&) {
        return -1;
      }
    });
    std::thread stopper([&] { source.request_stop(); });
    p.set_value(r);
    stopper.join();
    const int got = reader.join();
    CHECK((got == r || got == -1));
    (got == r ? values : cancelled)++;
  }
  CHECK(values + cancelled == rounds);
}

TEST_CASE("condition_variable: a stop ends wait, wait(pred) and wait_for with the lock held again") {
  pf::thread_pool pool(2);
  pf::mutex m;
  pf::condition_variable cv;
  std::stop_source source;
  std::atomic<int> started{0}, cancelled_with_lock{0};
  std::vector<pf::join_handle<void>> fibers;
  for (int kind = 0; kind < 3; ++kind) {
    fibers.push_back(pool.spawn(source.get_token(), [&, kind] {
      std::unique_lock lock(m);
      started.fetch_add(1);
      try {
        if (kind == 0) cv.wait(lock);
        if (kind == 1) cv.wait(lock, [] { return false; });
        if (kind == 2) (void)cv.wait_for(lock, 60s);
      } catch (const pf::operation_cancelled&) {
        if (lock.owns_lock()) cancelled_with_lock.fetch_add(1);
      }
    }));
  }
  REQUIRE(eventually([&] { return started.load() == 3; }));
  std::this_thread::sleep_for(5ms);
  source.request_stop();
  for (auto& f : fibers) f.join();
  CHECK(cancelled_with_lock.load() == 3);
  CHECK(m.try_lock());  // every cancelled waiter released it on the way out
  m.unlock();
}

TEST_CASE("condition_variable: stops racing notify_one never lose a notification") {
  // Each round: two waiters, one notify_one and a stop of one waiter's token at about the same
  // moment. The notification may go to either; a waiter cancelled after being notified keeps it
  // (the claim picks one), so at least one waiter returns normally and none hangs.
  pf::thread_pool pool(2);
  const int rounds = fibers_test::sanitized() ? 50 : 300;
  int woken = 0, cancelled = 0;
  for (int r = 0; r < rounds; ++r) {
    pf::mutex m;
    pf::condition_variable cv;
    bool go = false;
    std::stop_source source;
    std::atomic<int> waiting{0}, w{0}, c{0};
    auto body = [&] {
      std::unique_lock lock(m);
      waiting.fetch_add(1);
      try {
        cv.wait(lock, [&] { return go; });
        w.fetch_add(1);
      } catch (const pf::operation_cancelled&) {
        c.fetch_add(1);
      }
    };
    auto a = pool.spawn(source.get_token(), body);
    auto b = pool.spawn(body);  // no token: only a notification ends it
    REQUIRE(eventually([&] { return waiting.load() == 2; }));
    std::thread stopper([&] { source.request_stop(); });
    {
      std::lock_guard lock(m);
      go = true;
    }
    cv.notify_one();
    stopper.join();
    cv.notify_all();  // the predicate is true now: whoever still waits returns
    a.join();
    b.join();
    CHECK(w.load() + c.load() == 2);
    CHECK(w.load() >= 1);
    woken += w.load();
    cancelled += c.load();
  }
  CHECK(woken + cancelled == 2 * rounds);
}

TEST_CASE("latch and wait_group: waits end with operation_cancelled; a zero count returns at once") {
  pf::thread_pool pool(2);
  pf::latch l(1);
  pf::wait_group g(1);
  std::stop_source source;
  std::atomic<int> started{0}, cancelled{0};
  auto waiter = pool.spawn(source.get_token(), [&] {
    started.fetch_add(1);
    try {
      l.wait();
    } catch (const pf::operation_cancelled&) {
      cancelled.fetch_add(1);
    }
    try {
      g.wait();
    } catch (const pf::operation_cancelled&) {
      cancelled.fetch_add(1);
    }
  });
  REQUIRE(eventually([&] { return started.load() == 1; }));
  std::this_thread::sleep_for(5ms);
  source.request_stop();
  waiter.join();
  CHECK(cancelled.load() == 2);
  l.count_down();
  g.done();
  // Stopped, but nothing to wait for: no throw.
  pool.spawn(source.get_token(),
             [&] {
               l.wait();
               g.wait();
             })
      .join();
}

namespace {
pools::fibers::pool_options one_worker() {
  pools::fibers::pool_options o;
  o.threads = 1;
  return o;
}

// What the two harnesses below share: on `b` (one worker), a fiber waits on `p` under `source`'s
// token, and once it has suspended b's only worker is held busy until `release`, so that fiber,
// even once woken, cannot run (and leave the wait) before then. Returns its join handle: 1 when
// the wait ended by a wake-up, 0 when by the stop.
template <class Primitive, class Wait>
auto held_cancellable_waiter(pf::thread_pool& b, Primitive& p, Wait& wait, std::stop_source& source,
                             std::atomic<bool>& release) {
  std::atomic<int> started{0};  // both flags are done with once this returns
  std::atomic<bool> holding{false};
  auto cancellable = b.spawn(source.get_token(), [&started, &wait, &p] {
    started.fetch_add(1);
    try {
      wait(p);
    } catch (const pf::operation_cancelled&) {
      return 0;  // only if the stop came first
    }
    return 1;
  });
  REQUIRE(eventually([&] { return started.load() == 1; }));
  b.post([&holding, &release] {  // runs once the cancellable waiter has suspended: b has one worker
    holding = true;
    while (!release.load()) std::this_thread::sleep_for(20us);  // blocks b's worker on purpose
  });
  REQUIRE(eventually([&] { return holding.load(); }));
  return cancellable;
}

// The use-after-free the coroutines' async_event and channel once had, made to happen every
// round: two waiters on one primitive, a cancellable one (pool b) and a plain one (pool a). One
// wake-up (`wake`) takes both. b's only worker is held busy meanwhile, so the cancellable waiter,
// though woken, cannot run yet and still has its stop callback registered — unless the waker
// deregistered it (wake_all). The plain waiter destroys the primitive, then requests the stop:
// a callback still registered would now lock the freed primitive (ASan: heap-use-after-free).
template <class Primitive, class Wait, class Wake>
int destroy_then_stop(Wait wait, Wake wake, int rounds) {
  pf::thread_pool a(one_worker());
  pf::thread_pool b(one_worker());
  int ended = 0;
  for (int round = 0; round < rounds; ++round) {
    auto* p = new Primitive(1);
    std::stop_source source;
    std::atomic<bool> release{false};
    auto cancellable = held_cancellable_waiter(b, *p, wait, source, release);
    auto plain = a.spawn([&, p] {
      wait(*p);
      delete p;
      source.request_stop();
      release = true;
    });
    std::this_thread::sleep_for(std::chrono::microseconds(round % 20));
    wake(*p);  // before the plain waiter deletes p: it is woken by this, or finds it done
    plain.join();
    ended += cancellable.join();
  }
  return ended;
}
}  // namespace

TEST_CASE("cancellation: a stop after close() never reaches a channel its plain receiver destroyed") {
  const int rounds = fibers_test::sanitized() ? 50 : 200;
  auto receive = [](pf::channel<int>& ch) { (void)ch.recv(); };
  auto close = [](pf::channel<int>& ch) { ch.close(); };
  CHECK(destroy_then_stop<pf::channel<int>>(receive, close, rounds) == rounds);
}

TEST_CASE("cancellation: a stop after count_down never reaches a latch its plain waiter destroyed") {
  const int rounds = fibers_test::sanitized() ? 50 : 200;
  auto wait = [](pf::latch& l) { l.wait(); };
  auto count_down = [](pf::latch& l) { l.count_down(); };
  CHECK(destroy_then_stop<pf::latch>(wait, count_down, rounds) == rounds);
}

namespace {
// As destroy_then_stop, for a hand-over that wakes one waiter (a channel transfer, notify_one):
// the waker itself sees the operation done and destroys the primitive at once, then requests the
// stop. The woken waiter cannot run yet (b's only worker is held), so its stop callback is still
// registered unless the waker deregistered it before waking it; if it were, it would now lock the
// freed primitive (ASan: heap-use-after-free; TSan: a race with the free).
template <class Primitive, class Wait, class Wake>
int woken_one_then_stop(Wait wait, Wake wake, int rounds) {
  pf::thread_pool a(one_worker());
  pf::thread_pool b(one_worker());
  int ended = 0;
  for (int round = 0; round < rounds; ++round) {
    auto* p = new Primitive();
    std::stop_source source;
    std::atomic<bool> release{false};
    auto cancellable = held_cancellable_waiter(b, *p, wait, source, release);
    a.spawn([&, p] {
       wake(*p);  // hands over to the waiter, which is then done with p as far as we can tell
       delete p;
       source.request_stop();
       release = true;
     }).join();
    ended += cancellable.join();
  }
  return ended;
}
}  // namespace

TEST_CASE("cancellation: a stop after send() never reaches a channel the sender destroyed") {
  const int rounds = fibers_test::sanitized() ? 50 : 200;
  auto receive = [](pf::channel<int>& ch) { CHECK(ch.recv() == 7); };
  auto send = [](pf::channel<int>& ch) { CHECK(ch.send(7) == pf::channel_op_status::success); };
  CHECK(woken_one_then_stop<pf::channel<int>>(receive, send, rounds) == rounds);
}

TEST_CASE("cancellation: a stop after recv() never reaches a channel the receiver destroyed") {
  const int rounds = fibers_test::sanitized() ? 50 : 200;
  auto send = [](pf::channel<int>& ch) { CHECK(ch.send(7) == pf::channel_op_status::success); };
  auto receive = [](pf::channel<int>& ch) { CHECK(ch.recv() == 7); };  // unbuffered: the sender waits
  CHECK(woken_one_then_stop<pf::channel<int>>(send, receive, rounds) == rounds);
}

TEST_CASE("cancellation: a stop after notify_one never reaches a condition variable its notifier destroyed") {
  const int rounds = fibers_test::sanitized() ? 50 : 200;
  pf::mutex m;  // outlives the condition variable: the woken waiter locks it again
  auto wait = [&m](pf::condition_variable& cv) {
    std::unique_lock lock(m);
    cv.wait(lock);  // no spurious wake-ups here: only notify_one or the stop ends it
  };
  auto notify = [&m](pf::condition_variable& cv) {
    std::lock_guard lock(m);
    cv.notify_one();
  };
  CHECK(woken_one_then_stop<pf::condition_variable>(wait, notify, rounds) == rounds);
}

namespace {
// A release (the last count_down, the last done, close) races a stop of a cancellable waiter, and
// a third thread destroys the primitive as soon as it sees the release: it never waited, so
// nothing wakes it; it polls (`released`). The stop's callback may be on its way to the
// primitive's lock when the release takes the waiter; the release must not publish itself until
// that callback is done with the primitive, or the poller frees it under the callback (ASan:
// heap-use-after-free; TSan: a race with the free).
template <class Primitive, class Make, class Wait, class Release, class Released>
int release_racing_stop(Make make, Wait wait, Release release, Released released, int rounds) {
  pf::thread_pool b(one_worker());
  int ended = 0;
  for (int round = 0; round < rounds; ++round) {
    Primitive* p = make();
    std::stop_source source;
    std::atomic<int> started{0};
    auto cancellable = b.spawn(source.get_token(), [&, p] {
      started.fetch_add(1);
      try {
        wait(*p);
      } catch (const pf::operation_cancelled&) {
        return 0;  // the stop came first
      }
      return 1;
    });
    REQUIRE(eventually([&] { return started.load() == 1; }));
    std::atomic<bool> queued{false};
    b.post([&] { queued = true; });  // runs once the waiter has suspended: b has one worker
    REQUIRE(eventually([&] { return queued.load(); }));
    std::atomic<bool> go{false};
    std::thread stopper([&] {
      while (!go.load()) {
      }
      source.request_stop();
    });
    std::thread releaser([&, p] {
      while (!go.load()) {
      }
      release(*p);
    });
    go = true;
    while (!released(*p)) {
    }
    delete p;
    stopper.join();
    releaser.join();
    const int r = cancellable.join();
    CHECK((r == 0 || r == 1));
    ended += 1;
  }
  return ended;
}
}  // namespace

TEST_CASE("cancellation: a latch seen released may be destroyed while a stop races its last count_down") {
  const int rounds = fibers_test::sanitized() ? 300 : 1000;
  CHECK(release_racing_stop<pf::latch>([] { return new pf::latch(1); }, [](pf::latch& l) { l.wait(); },
                                       [](pf::latch& l) { l.count_down(); },
                                       [](pf::latch& l) { return l.try_wait(); }, rounds) == rounds);
}

TEST_CASE("cancellation: a wait_group seen done may be destroyed while a stop races its last done") {
  const int rounds = fibers_test::sanitized() ? 300 : 1000;
  CHECK(release_racing_stop<pf::wait_group>(
            [] { return new pf::wait_group(1); }, [](pf::wait_group& g) { g.wait(); },
            [](pf::wait_group& g) { g.done(); }, [](pf::wait_group& g) { return g.count() == 0; },
            rounds) == rounds);
}

TEST_CASE("cancellation: a channel seen closed may be destroyed while a stop races close()") {
  const int rounds = fibers_test::sanitized() ? 300 : 1000;
  CHECK(release_racing_stop<pf::channel<int>>(
            [] { return new pf::channel<int>(1); }, [](pf::channel<int>& ch) { (void)ch.recv(); },
            [](pf::channel<int>& ch) { ch.close(); }, [](pf::channel<int>& ch) { return ch.is_closed(); },
            rounds) == rounds);
}
