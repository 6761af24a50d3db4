// SPDX-License-Identifier: MIT
// future / promise: values, exceptions, the std::future_error cases, timed waits, threads.
#include <doctest/doctest.h>

#include <pools/fibers/future.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using pools::fibers::thread_pool;

namespace {
std::future_errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::future_error& e) {
    return static_cast<std::future_errc>(e.code().value());
  }
  return std::future_errc{};
}
}  // namespace

TEST_CASE("future: value set later by another fiber; get suspends the reader") {
  pools::fibers::pool_options o;
  o.threads = 1;  // one worker: if get() blocked the thread, the writer could never run
  thread_pool pool(o);
  pools::fibers::promise<std::string> p;
  auto f = p.get_future();
  auto reader = pool.spawn([&] { return f.get(); });
  auto writer = pool.spawn([&] {
    pools::fibers::this_fiber::sleep_for(2ms);
    p.set_value("ready");
  });
  CHECK(reader.join() == "ready");
  writer.join();
  CHECK_FALSE(f.valid());
}

TEST_CASE("future: exceptions, void, move-only values, plain threads") {
  thread_pool pool(2);
  SUBCASE("exception") {
    pools::fibers::promise<int> p;
    auto f = p.get_future();
    pool.post([&] {
      // The worker drops every reference to the exception before publishing it. (A by-value
      // copy left behind, as std::make_exception_ptr's parameter is, shares libstdc++'s
      // reference-counted message string; freeing it after the reader is done is correct but
      // invisible to ThreadSanitizer, as libstdc++ is not instrumented.)
      std::exception_ptr e;
      try {
        throw std::domain_error("no value");
      } catch (...) {
        e = std::current_exception();
      }
      p.set_exception(std::move(e));
    });
    CHECK_THROWS_WITH_AS(f.get(), "no value", std::domain_error);
  }
  SUBCASE("void and move-only") {
    pools::fibers::promise<void> done;
    pools::fibers::promise<std::unique_ptr<int>> box;
    auto fd = done.get_future();
    auto fb = box.get_future();
    pool.post([&] {
      box.set_value(std::make_unique<int>(3));
      done.set_value();
    });
    fd.get();
    CHECK(*fb.get() == 3);
  }
  SUBCASE("a fiber waits for a value from a plain thread") {
    pools::fibers::promise<int> p;
    auto f = p.get_future();
    auto reader = pool.spawn([&] { return f.get() * 2; });
    std::thread writer([&] {
      std::this_thread::sleep_for(5ms);
      p.set_value(21);
    });
    CHECK(reader.join() == 42);
    writer.join();
  }
}

TEST_CASE("future: the std::future_error cases") {
  SUBCASE("broken promise") {
    pools::fibers::future<int> f;
    {
      pools::fibers::promise<int> p;
      f = p.get_future();
    }
    CHECK(code_of([&] { (void)f.get(); }) == std::future_errc::broken_promise);
  }
  SUBCASE("already satisfied, already retrieved, no state") {
    pools::fibers::promise<int> p;
    auto f = p.get_future();
    CHECK(code_of([&] { (void)p.get_future(); }) == std::future_errc::future_already_retrieved);
    p.set_value(1);
    CHECK(code_of([&] { p.set_value(2); }) == std::future_errc::promise_already_satisfied);
    CHECK(f.get() == 1);
    CHECK(code_of([&] { (void)f.get(); }) == std::future_errc::no_state);
    pools::fibers::future<int> empty;
    CHECK(code_of([&] { empty.wait(); }) == std::future_errc::no_state);
  }
}

TEST_CASE("future: wait_for times out, then sees the value") {
  thread_pool pool(1);
  pools::fibers::promise<int> p;
  auto f = p.get_future();
  const auto first = pool.run([&] { return f.wait_for(10ms); });
  CHECK(first == std::future_status::timeout);
  CHECK(f.wait_for(1ms) == std::future_status::timeout);  // from a plain thread too
  p.set_value(7);
  CHECK(pool.run([&] { return f.wait_for(10s); }) == std::future_status::ready);
  CHECK(f.is_ready());
  CHECK(f.get() == 7);
}
