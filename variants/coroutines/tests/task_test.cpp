// SPDX-License-Identifier: MIT
// task<T>: laziness, results of every kind, exceptions at co_await, result() without a co_await,
// ownership of the frame, symmetric transfer (constant stack in long chains).
#include <doctest/doctest.h>

#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "test_support.hpp"

namespace pc = pools::coroutines;
using coro_test::lifetime_probe;

namespace {

pc::task<int> forty_two() {
  co_return 42;
}
pc::task<void> set_flag(bool& flag) {
  flag = true;
  co_return;
}
pc::task<int&> pick(int& x) {
  co_return x;
}
pc::task<std::unique_ptr<int>> boxed(int v) {
  co_return std::make_unique<int>(v);
}
pc::task<std::string> fails(std::string why) {
  throw std::runtime_error(why);
  co_return "unreachable";
}
pc::task<int> probe_holder(lifetime_probe) {
  co_return 1;
}

pc::task<int> add_awaited() {
  int a = co_await forty_two();
  int b = co_await forty_two();
  co_return a + b;
}

}  // namespace

static_assert(!std::is_copy_constructible_v<pc::task<int>>, "task is move-only");
static_assert(std::is_nothrow_move_constructible_v<pc::task<int>>);

TEST_CASE("task: lazy — nothing runs until it is awaited") {
  pc::thread_pool pool(2);
  bool ran = false;
  auto t = set_flag(ran);
  CHECK_FALSE(ran);
  CHECK(t.valid());
  CHECK_FALSE(t.is_ready());
  pc::sync_wait(pool, std::move(t));
  CHECK(ran);
}

TEST_CASE("task: values, references, move-only results and void") {
  pc::thread_pool pool(2);
  CHECK(pc::sync_wait(pool, forty_two()) == 42);
  CHECK(pc::sync_wait(pool, add_awaited()) == 84);
  int x = 5;
  int& r = pc::sync_wait(pool, pick(x));
  CHECK(&r == &x);
  auto p = pc::sync_wait(pool, boxed(7));
  REQUIRE(p);
  CHECK(*p == 7);
}

TEST_CASE("task: an exception is rethrown at co_await, type and message intact") {
  pc::thread_pool pool(2);
  auto outer = []() -> pc::task<std::string> {
    try {
      co_await fails("inner failure");
    } catch (const std::runtime_error& e) {
      co_return std::string("caught: ") + e.what();
    }
    co_return "not caught";
  };
  CHECK(pc::sync_wait(pool, outer()) == "caught: inner failure");
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, fails("to the caller")), "to the caller", std::runtime_error);
}

TEST_CASE("task: an unstarted task frees its frame (and its parameters) exactly once") {
  lifetime_probe::reset();
  {
    auto t = probe_holder(lifetime_probe{});
    CHECK(lifetime_probe::alive.load() == 1);  // the copy in the frame
  }
  CHECK(lifetime_probe::alive.load() == 0);
  // Moved-from tasks own nothing; the frame dies with its last owner.
  {
    auto a = probe_holder(lifetime_probe{});
    auto b = std::move(a);
    CHECK_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
    pc::task<int> c;
    c = std::move(b);
    CHECK(lifetime_probe::alive.load() == 1);
  }
  CHECK(lifetime_probe::alive.load() == 0);
}

TEST_CASE("task: a finished task frees its frame when the owner goes away, not before") {
  lifetime_probe::reset();
  pc::thread_pool pool(1);
  auto run = []() -> pc::task<int> {
    auto t = probe_holder(lifetime_probe{});
    int v = co_await std::move(t);
    // t still owns its (finished) frame here
    co_return v + lifetime_probe::alive.load();
  };
  CHECK(pc::sync_wait(pool, run()) == 2);
  CHECK(lifetime_probe::alive.load() == 0);
}

TEST_CASE("task: co_await on an empty task throws std::invalid_argument") {
  pc::thread_pool pool(1);
  auto run = []() -> pc::task<int> {
    pc::task<int> empty;
    co_return co_await std::move(empty);
  };
  CHECK_THROWS_AS(pc::sync_wait(pool, run()), std::invalid_argument);
}

TEST_CASE("task: result() of a finished task is its value or exception; of any other, an error") {
  pc::thread_pool pool(1);
  auto run = []() -> pc::task<int> {
    pc::task<int> unrun = forty_two();
    CHECK_THROWS_WITH_AS(std::move(unrun).result(),
                         "pools::coroutines::task: result() of a task that has not finished",
                         std::invalid_argument);  // not run: nothing is touched
    pc::task<int> t = forty_two();
    pc::task<std::unique_ptr<int>> box = boxed(7);
    pc::fork_scope scope;
    co_await scope.fork(t);
    co_await scope.call(box);
    co_await scope.join();
    CHECK(std::move(t).result() == 42);
    const std::unique_ptr<int> got = std::move(box).result();  // moved out: move-only works
    REQUIRE(got != nullptr);
    CHECK(*got == 7);
    pc::task<std::string> failed = fails("inside");
    pc::fork_scope failing;
    co_await failing.call(failed);
    bool threw = false;
    try {
      co_await failing.join();
    } catch (const std::runtime_error&) {
      threw = true;
    }
    CHECK(threw);
    CHECK_THROWS_WITH_AS(std::move(failed).result(), "inside", std::runtime_error);  // again
    pc::task<int> empty;
    CHECK_THROWS_AS(std::move(empty).result(), std::invalid_argument);
    co_return 1;
  };
  CHECK(pc::sync_wait(pool, run()) == 1);
}

namespace {
pc::task<int> one() {
  co_return 1;
}
pc::task<long> count_sequential(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += co_await one();
  co_return sum;
}
pc::task<long> nested(int depth) {
  if (depth == 0) co_return 0;
  co_return 1 + co_await nested(depth - 1);
}
}  // namespace

// Symmetric transfer is a tail call in optimised GCC and Clang builds. Under ThreadSanitizer GCC
// cannot emit it (the instrumentation's function-exit hook runs after the call), so there every
// transfer nests a native frame and these two chains must stay short enough for a thread's stack.
static long chain_length(long full) {
  return coro_test::sanitized() ? 2'000 : full;
}

TEST_CASE("task: symmetric transfer — a million synchronous awaits in a loop use constant stack") {
  // Without symmetric transfer each completion would resume the awaiting coroutine from inside
  // the child's final suspend, nesting a call per iteration: a million frames of native stack
  // (about 100 MB; a worker has 8 MB), so this test crashes unless the transfers are tail calls.
  pc::thread_pool pool(1);
  const long n = chain_length(1'000'000);
  CHECK(pc::sync_wait(pool, count_sequential(n)) == n);
}

TEST_CASE("task: deep recursion of awaits (100,000 levels) completes") {
  pc::thread_pool pool(1);
  const long n = chain_length(100'000);
  CHECK(pc::sync_wait(pool, nested(static_cast<int>(n))) == n);
}
