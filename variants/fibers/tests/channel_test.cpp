// SPDX-License-Identifier: MIT
// channel: unbuffered hand-over, buffering and order, close, and 100,000 fibers on one channel.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::fibers::channel;
using pools::fibers::channel_op_status;
using pools::fibers::thread_pool;

TEST_CASE("channel: unbuffered ping-pong between two fibers on one worker") {
  pools::fibers::pool_options o;
  o.threads = 1;
  thread_pool pool(o);
  channel<int> ping, pong;
  const int rounds = 1000;
  auto player = pool.spawn([&] {
    int sum = 0;
    for (int i = 0; i < rounds; ++i) {
      const int v = *ping.recv();
      sum += v;
      CHECK(pong.send(v + 1) == channel_op_status::success);
    }
    return sum;
  });
  const int echoed = pool.run([&] {
    int total = 0;
    for (int i = 0; i < rounds; ++i) {
      ping.send(i);
      total += *pong.recv();
    }
    return total;
  });
  CHECK(player.join() == rounds * (rounds - 1) / 2);
  CHECK(echoed == rounds * (rounds + 1) / 2);
}

TEST_CASE("channel: unbuffered send waits for a receiver") {
  thread_pool pool(2);
  channel<int> ch;
  int v = 1;
  CHECK(ch.try_send(v) == channel_op_status::full);  // nobody is receiving
  int out = 0;
  CHECK(ch.try_recv(out) == channel_op_status::empty);
  std::atomic<bool> sent{false};
  auto sender = pool.spawn([&] {
    ch.send(5);
    sent = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_FALSE(sent.load());  // no receiver yet: the sender is still waiting
  CHECK(ch.recv() == 5);     // a plain thread receives
  sender.join();
  CHECK(sent.load());
}

TEST_CASE("channel: buffered channel keeps order with blocked senders") {
  thread_pool pool(2);
  channel<int> ch(4);
  CHECK(ch.capacity() == 4);
  for (int i = 0; i < 4; ++i) {
    int v = i;
    CHECK(ch.try_send(v) == channel_op_status::success);
  }
  int extra = 99;
  CHECK(ch.try_send(extra) == channel_op_status::full);
  CHECK(extra == 99);  // untouched on failure
  // Senders of 4..7 block (buffer full), in order, one after another.
  auto senders = pool.spawn([&] {
    for (int i = 4; i < 8; ++i) ch.send(i);
  });
  std::vector<int> got;
  for (int i = 0; i < 8; ++i) got.push_back(*ch.recv());
  senders.join();
  CHECK(got == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("channel: close wakes everyone; buffered values still drain") {
  thread_pool pool(2);
  SUBCASE("blocked receivers get nullopt, later sends fail") {
    channel<int> ch;
    pools::fibers::latch waiting(10);
    std::atomic<int> got_closed{0};
    std::vector<pools::fibers::join_handle<void>> receivers;
    for (int i = 0; i < 10; ++i) {
      receivers.push_back(pool.spawn([&] {
        waiting.count_down();
        if (!ch.recv()) got_closed.fetch_add(1);
      }));
    }
    waiting.wait();
    ch.close();
    ch.close();  // idempotent
    for (auto& r : receivers) r.join();
    CHECK(got_closed.load() == 10);
    CHECK(ch.is_closed());
    CHECK(ch.send(1) == channel_op_status::closed);
    int v = 1;
    CHECK(ch.try_send(v) == channel_op_status::closed);
    CHECK(ch.try_recv(v) == channel_op_status::closed);
  }
  SUBCASE("blocked senders fail with closed") {
    channel<int> ch(1);
    ch.send(1);
    auto blocked = pool.spawn([&] { return ch.send(2); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // usually blocked by now; either way:
    ch.close();
    CHECK(blocked.join() == channel_op_status::closed);
    CHECK(ch.recv() == 1);  // what was buffered before close is still delivered
    CHECK(ch.recv() == std::nullopt);
  }
}

TEST_CASE("channel: move-only values, many producers and consumers, fibers and threads mixed") {
  thread_pool pool(4);
  channel<std::unique_ptr<int>> ch(16);
  const int producers = 8;
  const int per_producer = static_cast<int>(fibers_test::scaled(5000));
  std::atomic<long> sum{0};
  std::atomic<int> count{0};
  pools::fibers::latch produced(producers);
  std::vector<pools::fibers::join_handle<void>> consumers;
  for (int c = 0; c < 4; ++c) {
    consumers.push_back(pool.spawn([&] {
      while (auto v = ch.recv()) {
        sum.fetch_add(**v);
        count.fetch_add(1);
      }
    }));
  }
  for (int p = 0; p < producers; ++p) {
    pool.post([&, p] {
      for (int i = 0; i < per_producer; ++i) ch.send(std::make_unique<int>(p * per_producer + i));
      produced.count_down();
    });
  }
  std::thread outside_consumer([&] {
    while (auto v = ch.recv()) {
      sum.fetch_add(**v);
      count.fetch_add(1);
    }
  });
  produced.wait();
  ch.close();
  for (auto& c : consumers) c.join();
  outside_consumer.join();
  const long n = static_cast<long>(producers) * per_producer;
  CHECK(count.load() == n);
  CHECK(sum.load() == n * (n - 1) / 2);
}

TEST_CASE("channel: 100,000 fibers blocked on one channel, then released, all counted") {
  // Every fiber suspends in recv() on its own stack (100,000 stacks of 256 KiB reserved, about
  // one touched page each). The main thread then sends one value per fiber. Scaled down under
  // sanitizers: ASan runs 20,000 (it is slower, not limited); TSan gives every fiber a context
  // of its own and GCC 12's runtime allows at most 8,128 live ones, so it runs 3,000.
#if defined(POOLS_TSAN)
  const std::int64_t n = 3'000;
#else
  const std::int64_t n = fibers_test::sanitized() ? 20'000 : 100'000;
#endif
  thread_pool pool(2);
  channel<std::int64_t> ch;
  pools::fibers::latch arrived(n);
  pools::fibers::latch finished(n);
  std::atomic<std::int64_t> received{0}, sum{0};
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < n; ++i) {
    pool.post([&] {
      arrived.count_down();
      if (auto v = ch.recv()) {
        sum.fetch_add(*v, std::memory_order_relaxed);
        received.fetch_add(1, std::memory_order_relaxed);
      }
      finished.count_down();
    });
  }
  arrived.wait();
  const auto stats = pool.stats();
  CHECK(stats.fibers_alive >= static_cast<std::size_t>(n) - 2);  // all but those still running
  for (std::int64_t i = 1; i <= n; ++i) CHECK_EQ(ch.send(i), channel_op_status::success);
  finished.wait();
  CHECK(received.load() == n);
  CHECK(sum.load() == n * (n + 1) / 2);
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(n << " fibers blocked and released in " << took << " s; stacks mapped: " << stats.stacks.mapped
            << ", with guard page: " << stats.stacks.guarded);
}
