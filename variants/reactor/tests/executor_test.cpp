// SPDX-License-Identifier: MIT
// The reactor executor beyond the conformance suite: strategies, io_context access, stop().
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/submit.hpp>
#include <pools/testing/zero_threads.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "test_support.hpp"

using pools::reactor::executor;
using pools::reactor::per_thread_executor;
using pools::reactor::shared_executor;
using pools::reactor::strategy;

namespace {

// The index of the io_context whose handler is running on this thread, or -1.
int current_context(executor& ex) {
  for (std::size_t i = 0; i < ex.context_count(); ++i) {
    if (ex.context(i).get_executor().running_in_this_thread()) return static_cast<int>(i);
  }
  return -1;
}

// Holds every reactor thread in a task until release() (so that work queues up behind them).
class thread_holder {
 public:
  explicit thread_holder(executor& ex) : held_(static_cast<std::ptrdiff_t>(ex.concurrency())) {
    // One blocker per io_context thread: for per_thread each context gets one (posted to it
    // directly), for shared the N blockers end up on the N threads because each blocks its own.
    for (std::size_t t = 0; t < ex.concurrency(); ++t) {
      boost::asio::post(ex.context(t % ex.context_count()), [this] {
        held_.done();
        while (!released_.load(std::memory_order_acquire)) std::this_thread::yield();
      });
    }
    held_.wait();  // every thread is now inside a blocker
  }
  void release() { released_.store(true, std::memory_order_release); }

 private:
  pools::wait_group held_;
  std::atomic<bool> released_{false};
};

}  // namespace

TEST_CASE("strategy: names round-trip, anything else is rejected") {
  CHECK(pools::reactor::to_string(strategy::per_thread) == "per_thread");
  CHECK(pools::reactor::to_string(strategy::shared) == "shared");
  CHECK(pools::reactor::parse_strategy("per_thread") == strategy::per_thread);
  CHECK(pools::reactor::parse_strategy("shared") == strategy::shared);
  CHECK_FALSE(pools::reactor::parse_strategy("Shared").has_value());
  CHECK_FALSE(pools::reactor::parse_strategy("").has_value());
  CHECK_FALSE(pools::reactor::parse_strategy("per-thread").has_value());
}

TEST_CASE("executor: a thread count of 0 starts one thread per hardware thread, in both strategies") {
  pools::testing::check_zero_threads_means_every_core([] { return per_thread_executor(0); });
  pools::testing::check_zero_threads_means_every_core([] { return shared_executor(0); });
}

TEST_CASE("executor: per_thread has one io_context per thread, shared has one for all") {
  per_thread_executor p(3);
  shared_executor s(3);
  CHECK(p.strategy() == strategy::per_thread);
  CHECK(s.strategy() == strategy::shared);
  CHECK(p.concurrency() == 3);
  CHECK(s.concurrency() == 3);
  CHECK(p.context_count() == 3);
  CHECK(s.context_count() == 1);
  CHECK_THROWS_AS(p.context(3), std::out_of_range);
  CHECK_THROWS_AS(s.context(1), std::out_of_range);

  // Round-robin: any thread's consecutive picks visit every io_context.
  std::set<executor::context_type*> picked;
  for (int i = 0; i < 3; ++i) picked.insert(&p.next_context());
  CHECK(picked.size() == 3);
  CHECK(&s.next_context() == &s.context(0));
  CHECK(&s.next_context() == &s.context(0));
}

TEST_CASE_TEMPLATE("executor: N tasks that wait for each other all run at once on N threads", E,
                   per_thread_executor, shared_executor) {
  constexpr std::size_t n = 4;
  E ex(n);
  std::atomic<std::size_t> arrived{0};
  std::atomic<int> met{0};
  std::vector<int> context_of(n, -2);
  pools::wait_group wg(n);
  for (std::size_t i = 0; i < n; ++i) {
    // next_context(): strict round-robin (post() would send a run of 16 to one context).
    boost::asio::post(ex.next_context(), [&, i] {
      CHECK(ex.running_in_this_thread());
      context_of[i] = current_context(ex);
      arrived.fetch_add(1);
      // Succeeds only if all n tasks are running at the same time, i.e. on n distinct threads.
      if (reactor_test::wait_until([&] { return arrived.load() == n; }, std::chrono::seconds(10)))
        met.fetch_add(1);
      wg.done();
    });
  }
  wg.wait();
  CHECK(met.load() == static_cast<int>(n));
  CHECK_FALSE(ex.running_in_this_thread());
  std::set<int> contexts(context_of.begin(), context_of.end());
  if (ex.strategy() == strategy::per_thread) {
    CHECK(contexts == std::set<int>{0, 1, 2, 3});  // round-robin put one task on each thread
  } else {
    CHECK(contexts == std::set<int>{0});
  }
}

TEST_CASE_TEMPLATE("executor: a small fan-out of post() reaches every thread (parallel_for's case)", E,
                   per_thread_executor, shared_executor) {
  // After a pause, N posted tasks that each wait for all the others can only finish if post()
  // put them on N different threads. (Under per_thread a long stream of posts goes in runs to
  // one context at a time; a fan-out this small must not.)
  constexpr std::size_t n = 4;
  E ex(n);
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // ends any burst of earlier posts
    std::atomic<std::size_t> arrived{0};
    std::atomic<int> met{0};
    pools::wait_group wg(n);
    for (std::size_t i = 0; i < n; ++i) {
      ex.post([&] {
        arrived.fetch_add(1);
        if (reactor_test::wait_until([&] { return arrived.load() == n; }, std::chrono::seconds(10)))
          met.fetch_add(1);
        wg.done();
      });
    }
    wg.wait();
    CHECK(met.load() == static_cast<int>(n));
  }
}

TEST_CASE_TEMPLATE("executor: stop() refuses outside work, then drains everything accepted", E,
                   per_thread_executor, shared_executor) {
  const int tasks = reactor_test::scaled(20'000);
  constexpr int follow_ups_per_task = 3;
  std::atomic<int> ran{0}, follow_ups{0}, follow_up_refused{0};
  E ex(4);
  thread_holder holder(ex);
  for (int i = 0; i < tasks; ++i) {
    ex.post([&] {
      ran.fetch_add(1, std::memory_order_relaxed);
      // Posted during the drain; under per_thread round-robin these cross io_contexts.
      for (int k = 0; k < follow_ups_per_task; ++k) {
        try {
          ex.post([&] { follow_ups.fetch_add(1, std::memory_order_relaxed); });
        } catch (const pools::reactor::executor_stopped&) {
          follow_up_refused.fetch_add(1);
        }
      }
    });
  }
  ex.request_stop();
  CHECK(ex.stopping());
  CHECK_THROWS_AS(ex.post([] {}), pools::reactor::executor_stopped);
  CHECK_THROWS_AS(ex.next_context(), pools::reactor::executor_stopped);
  CHECK(ran.load() == 0);  // still held: nothing ran before the stop was requested
  holder.release();
  ex.stop();
  CHECK(ran.load() == tasks);
  CHECK(follow_ups.load() == tasks * follow_ups_per_task);
  CHECK(follow_up_refused.load() == 0);
  CHECK_THROWS_AS(ex.post([] {}), pools::reactor::executor_stopped);
}

TEST_CASE_TEMPLATE("executor: stop() from a task is refused, request_stop() from a task works", E,
                   per_thread_executor, shared_executor) {
  E ex(2);
  // Caught inside the task: the check is about the type thrown, not about carrying it home.
  auto refused = pools::submit(ex, [&ex] {
    try {
      ex.stop();
    } catch (const std::logic_error&) {
      return true;
    }
    return false;
  });
  CHECK(refused.get());
  CHECK_FALSE(ex.stopping());

  std::atomic<int> after{0};
  pools::wait_group requested(1);
  ex.post([&] {
    ex.request_stop();
    ex.post([&] { after.fetch_add(1); });  // a task's own post during the drain is accepted
    requested.done();
  });
  requested.wait();
  ex.stop();
  CHECK(after.load() == 1);
}

TEST_CASE_TEMPLATE("executor: stop() is idempotent and safe from several threads at once", E,
                   per_thread_executor, shared_executor) {
  E ex(3);
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) ex.post([&] { ran.fetch_add(1); });
  {
    std::jthread a([&] { ex.stop(); });
    std::jthread b([&] { ex.stop(); });
  }
  ex.stop();
  CHECK(ran.load() == 1000);
}

TEST_CASE_TEMPLATE("executor: an exception from a handler posted straight to an io_context is reported", E,
                   per_thread_executor, shared_executor) {
  reactor_test::exception_counter counter;
  std::atomic<int> later{0};
  std::size_t contexts = 0;
  {
    E ex(2);
    contexts = ex.context_count();
    // Not through ex.post: a raw Asio handler, as the server driver's socket handlers are.
    for (std::size_t i = 0; i < ex.context_count(); ++i) {
      boost::asio::post(ex.context(i), [] { throw std::runtime_error("boom"); });
    }
    pools::wait_group wg(static_cast<std::ptrdiff_t>(ex.context_count()));
    for (std::size_t i = 0; i < ex.context_count(); ++i) {
      boost::asio::post(ex.context(i), [&] {
        later.fetch_add(1);
        wg.done();
      });
    }
    wg.wait();  // each io_context's thread went back into run() after its throw
    CHECK(pools::submit(ex, [] { return 5; }).get() == 5);
  }
  CHECK(counter.reported() == static_cast<int>(contexts));
  CHECK(later.load() == static_cast<int>(contexts));
}

namespace {
// A chain of `left` links, each posted by the one before through ex.post (under per_thread,
// round-robin sends most links to another io_context).
void chain_link(executor& ex, std::atomic<int>& links, int left) {
  links.fetch_add(1, std::memory_order_relaxed);
  if (left > 1) ex.post([&ex, &links, left] { chain_link(ex, links, left - 1); });
}
}  // namespace

TEST_CASE_TEMPLATE("executor: a stop() in the middle of cross-context chains loses no link", E,
                   per_thread_executor, shared_executor) {
  // The drain's hard case: a handler that read "not stopping" posts to another io_context while
  // the stop is under way. If that context's thread had already left run(), the link would be
  // lost and the count short. The stop lands at a different point in every round.
  const int rounds = reactor_test::scaled(50);
  constexpr int chains = 16;
  const int length = reactor_test::scaled(2000);
  for (int round = 0; round < rounds; ++round) {
    std::atomic<int> links{0};
    {
      E ex(4);
      for (int c = 0; c < chains; ++c) ex.post([&ex, &links, length] { chain_link(ex, links, length); });
      std::this_thread::sleep_for(std::chrono::microseconds(50 * (round % 8)));
      ex.stop();
    }
    REQUIRE(links.load() == chains * length);
  }
}

TEST_CASE("executor: per_thread drain keeps every context running until no handler can post across") {
  // A handler that started before the stop and posts to another io_context afterwards: the
  // marker on its own context cannot run before it finishes, so no guard is released and the
  // other context is still being run when the post lands. A drain that released each context's
  // guard at once would let context 1 (idle) finish, and the post would be lost.
  per_thread_executor ex(2);
  std::atomic<bool> stop_requested{false};
  std::atomic<int> ran{0};
  pools::wait_group started(1);
  boost::asio::post(ex.context(0), [&] {
    auto& other = ex.context(1);
    started.done();
    while (!stop_requested.load(std::memory_order_acquire)) std::this_thread::yield();
    boost::asio::post(other, [&] { ran.fetch_add(1); });
  });
  started.wait();
  ex.request_stop();
  // Room for a wrong drain to let context 1 finish first; the check below holds at any timing.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop_requested.store(true, std::memory_order_release);
  ex.stop();
  CHECK(ran.load() == 1);
}
