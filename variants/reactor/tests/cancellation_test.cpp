// SPDX-License-Identifier: MIT
// pools/reactor/cancellation.hpp: Asio's cancellation slots on a timer wait and on a chain of steps
// on a strand, and stop_signal, the bridge from std::stop_token. Every handler is counted: each
// operation completes exactly once, with success or with operation_aborted.
#include <doctest/doctest.h>

#include <pools/reactor/cancellation.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace reactor = pools::reactor;
using error_code = boost::system::error_code;
using reactor::per_thread_executor;
using reactor::shared_executor;
using clock_type = std::chrono::steady_clock;

namespace {
bool aborted(const error_code& ec) {
  return ec == asio::error::operation_aborted;
}
}  // namespace

TEST_CASE_TEMPLATE(
    "cancellation: a timer wait cancelled through its slot ends at once, with operation_aborted", E,
    per_thread_executor, shared_executor) {
  E ex(2);
  const auto strand = reactor::make_strand(ex);
  reactor::cancellation_signal cancel;
  pools::wait_group done(1);
  std::atomic<int> calls{0};
  error_code result;
  const auto start = clock_type::now();
  asio::post(strand, [&] {  // start and emit on the strand (Asio's rule)
    reactor::async_wait_for(strand, 1h, reactor::bind_cancellation_slot(cancel.slot(), [&](error_code ec) {
                              result = ec;
                              calls.fetch_add(1);
                              done.done();
                            }));
    CHECK(cancel.slot().has_handler());
  });
  asio::post(strand, [&] { cancel.emit(reactor::cancellation_type::terminal); });
  REQUIRE(done.wait_for(10s));
  CHECK(aborted(result));
  CHECK(clock_type::now() - start < 5s);
  ex.stop();  // returns: the cancelled hour-long wait is no longer work
  CHECK(calls.load() == 1);
  CHECK_FALSE(cancel.slot().has_handler());  // the completion removed it
}

TEST_CASE_TEMPLATE("cancellation: a wait that completes first succeeds, and a later emit is a no-op", E,
                   per_thread_executor, shared_executor) {
  E ex(2);
  const auto strand = reactor::make_strand(ex);
  reactor::cancellation_signal cancel;
  pools::wait_group done(1);
  std::atomic<int> calls{0}, aborts{0};
  const auto start = clock_type::now();
  asio::post(strand, [&] {
    reactor::async_wait_for(strand, 20ms, reactor::bind_cancellation_slot(cancel.slot(), [&](error_code ec) {
                              if (aborted(ec)) aborts.fetch_add(1);
                              calls.fetch_add(1);
                              done.done();
                            }));
  });
  REQUIRE(done.wait_for(10s));
  CHECK(clock_type::now() - start >= 20ms);
  pools::wait_group emitted(1);
  asio::post(strand, [&] {
    CHECK_FALSE(cancel.slot().has_handler());
    cancel.emit(reactor::cancellation_type::terminal);  // after the completion: nothing to cancel
    emitted.done();
  });
  REQUIRE(emitted.wait_for(10s));
  ex.stop();
  CHECK(calls.load() == 1);
  CHECK(aborts.load() == 0);
}

TEST_CASE("cancellation: a wait without a slot, or with a slot never emitted, just waits") {
  per_thread_executor ex(1);
  const auto strand = reactor::make_strand(ex);
  reactor::cancellation_signal unused;
  pools::wait_group done(2);
  std::atomic<int> ok{0};
  auto count = [&](error_code ec) {
    if (!ec) ok.fetch_add(1);
    done.done();
  };
  asio::post(strand, [&] {
    reactor::async_wait_for(strand, 5ms, count);
    reactor::async_wait_for(strand, 5ms, reactor::bind_cancellation_slot(unused.slot(), count));
  });
  REQUIRE(done.wait_for(10s));
  ex.stop();
  CHECK(ok.load() == 2);
}

// A chain of steps on one strand, each started by the previous step's handler with the same slot.
// Another thread stops the chain through a std::stop_token: the step queued when the emit lands
// never runs its work, and its handler gets operation_aborted; nothing after it starts.
TEST_CASE_TEMPLATE("cancellation: a chain on a strand, stopped from another thread, ends at the next step", E,
                   per_thread_executor, shared_executor) {
  E ex(2);
  const auto strand = reactor::make_strand(ex);
  std::stop_source stop;
  auto signal = std::make_shared<reactor::stop_signal>(stop.get_token(), strand);
  constexpr int length = 1'000'000;  // far more steps than run before the stop
  std::atomic<int> worked{0}, succeeded{0}, aborts{0};
  pools::wait_group ended(1);
  struct chain {
    const asio::any_io_executor& strand;
    reactor::stop_signal& signal;
    std::atomic<int>&worked, &succeeded, &aborts;
    pools::wait_group& ended;
    void step(int i) {
      reactor::async_post(
          strand, [this] { worked.fetch_add(1, std::memory_order_relaxed); },
          reactor::bind_cancellation_slot(signal.slot(), [this, i](error_code ec) {
            if (aborted(ec)) {
              aborts.fetch_add(1);
              return ended.done();
            }
            succeeded.fetch_add(1, std::memory_order_relaxed);
            if (i + 1 == length) return ended.done();
            step(i + 1);
          }));
    }
  } c{strand, *signal, worked, succeeded, aborts, ended};
  asio::post(strand, [&] { c.step(0); });
  while (worked.load() < 100) std::this_thread::yield();
  stop.request_stop();  // this thread: the emit is posted to the strand
  REQUIRE(ended.wait_for(30s));
  ex.stop();
  CHECK(aborts.load() == 1);
  CHECK(worked.load() == succeeded.load());  // the cancelled step's work never ran
  CHECK(succeeded.load() >= 100);
  CHECK(succeeded.load() < length);
  stop.request_stop();  // again, after the end: nothing happens
  signal.reset();
}

TEST_CASE("cancellation: stop_signal on a token already stopped cancels the wait started right after it") {
  shared_executor ex(2);
  const auto strand = reactor::make_strand(ex);
  std::stop_source stop;
  stop.request_stop();
  pools::wait_group done(1);
  error_code result;
  asio::post(strand, [&] {
    // The stop callback runs inside the constructor and posts its emit behind this handler, so
    // the wait has begun when it lands.
    auto signal = std::make_shared<reactor::stop_signal>(stop.get_token(), strand);
    reactor::async_wait_for(strand, 1h,
                            reactor::bind_cancellation_slot(signal->slot(), [&, signal](error_code ec) {
                              result = ec;
                              done.done();
                            }));
  });
  REQUIRE(done.wait_for(10s));
  ex.stop();
  CHECK(aborted(result));
}

// Many waits, each with its own stop_signal, stopped from another thread while some of them
// complete on their own: every handler runs once, and each is either a success or an abort.
TEST_CASE_TEMPLATE("cancellation: stops racing completions, every wait ends exactly once", E,
                   per_thread_executor, shared_executor) {
  E ex(2);
  const int n = reactor_test::scaled(2000);
  std::vector<std::stop_source> stops(static_cast<std::size_t>(n));
  std::atomic<int> ok{0}, aborts{0}, calls{0};
  pools::wait_group done(n);
  for (int i = 0; i < n; ++i) {
    const auto strand = reactor::make_strand(ex);
    auto token = stops[static_cast<std::size_t>(i)].get_token();
    asio::post(strand, [&, strand, token, i] {
      auto signal = std::make_shared<reactor::stop_signal>(token, strand);
      reactor::async_wait_for(strand, std::chrono::microseconds(i % 300),
                              reactor::bind_cancellation_slot(signal->slot(), [&, signal](error_code ec) {
                                (aborted(ec) ? aborts : ok).fetch_add(1);
                                calls.fetch_add(1);
                                done.done();
                              }));
    });
  }
  std::thread stopper([&] {
    for (auto& s : stops) s.request_stop();
  });
  stopper.join();
  REQUIRE(done.wait_for(30s));
  ex.stop();
  CHECK(calls.load() == n);
  CHECK(ok.load() + aborts.load() == n);
}
