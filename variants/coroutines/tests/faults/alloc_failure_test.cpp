// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): every public operation of both
// coroutine pools with its k-th allocation failing, for k = 1, 2, ... until it completes. Each
// attempt: the caller gets std::bad_alloc (from the call, or from sync_wait when a coroutine got
// it), nothing runs twice, an accepted coroutine runs, the pool still works, the destructor returns
// (watchdog), and nothing leaks (LeakSanitizer in the asan preset).
//
// this_thread: only the caller's allocations fail (deterministic). any_thread: the workers' too —
// frames of children forked on a worker (when_all and fork_scope), the timer batch, a channel's
// buffer.
#include <doctest/doctest.h>

#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/testing/fault_loop.hpp>

#include <atomic>
#include <chrono>
#include <new>
#include <optional>

namespace pc = pools::coroutines;
namespace pt = pools::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t threads = 2;
constexpr pt::alloc_scope scopes[] = {pt::alloc_scope::this_thread, pt::alloc_scope::any_thread};

pc::task<void> count_run(std::atomic<int>& runs) {
  runs.fetch_add(1, std::memory_order_relaxed);
  co_return;
}

template <class Pool>
pc::task<int> hop(Pool& pool, std::atomic<int>& runs) {
  co_await pool.schedule();
  runs.fetch_add(1, std::memory_order_relaxed);
  co_return 42;
}

pc::task<int> leaf(std::atomic<int>& runs, int v) {
  runs.fetch_add(1, std::memory_order_relaxed);
  co_return v;
}

pc::task<int> fork_two(std::atomic<int>& runs) {
  auto [a, b] = co_await pc::when_all(leaf(runs, 1), leaf(runs, 2));
  co_return a + b;
}

// The same fork, work-first (fork_scope): the children's frames are made before the scope, and on
// the textbook pool the parent's continuation goes through enqueue(), which may also fail.
pc::task<int> fork_two_work_first(std::atomic<int>& runs) {
  pc::task<int> a = leaf(runs, 1), b = leaf(runs, 2);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.call(b);
  co_await scope.join();
  co_return co_await std::move(a) + co_await std::move(b);
}

// A work-first chain `depth` forks deep: every level leaves its continuation in the worker's deque,
// so past the deque's first ring (256 slots) a fork's push must grow it, and that allocation may
// fail too. Returns depth + 1.
pc::task<int> fork_chain(std::atomic<int>& runs, int depth) {
  runs.fetch_add(1, std::memory_order_relaxed);
  if (depth == 0) co_return 1;
  pc::task<int> child = fork_chain(runs, depth - 1);
  pc::fork_scope scope;
  co_await scope.fork(child);
  co_await scope.join();
  co_return co_await std::move(child) + 1;
}
constexpr int chain_depth = 400;

pc::task<int> nap(pc::thread_pool& pool, std::atomic<int>& runs) {
  co_await pc::sleep_for(pool, 1ms);
  runs.fetch_add(1, std::memory_order_relaxed);
  co_return 7;
}

pc::task<int> send_one(pc::channel<int>& ch) {
  const bool sent = co_await ch.send(42);
  co_return sent ? 1 : 0;
}

pc::task<int> receive_one(pc::channel<int>& ch) {
  const std::optional<int> v = co_await ch.receive();
  co_return v.value_or(-1);
}

pc::task<int> pipe(std::atomic<int>& runs) {
  pc::channel<int> ch(1);
  auto [sent, received] = co_await pc::when_all(send_one(ch), receive_one(ch));
  runs.fetch_add(1, std::memory_order_relaxed);
  co_return sent == 1 ? received : -2;
}

// Runs `make()`'s task with sync_wait under the armed failure: either the task's value is
// `expected` and it ran `runs_if_done` counted steps, or std::bad_alloc reached the caller and
// at most that many ran. Then the pool works and is destroyed.
template <class Pool, class Make>
void check_sync_wait(const char* what, pt::alloc_scope scope, Make make, int expected, int runs_if_done) {
  pt::check_allocation_failures(what, [&](std::uint64_t k) {
    std::atomic<int> runs{0};
    {
      Pool pool(threads);
      auto t = make(pool, runs);  // the task's own frame is made before arming
      std::optional<int> v;
      try {
        pt::fail_allocation armed(k, scope);
        v = pc::sync_wait(pool, std::move(t));
      } catch (const std::bad_alloc&) {
      }
      if (v) {
        CHECK(*v == expected);
        CHECK(runs.load() == runs_if_done);
      } else {
        CHECK(runs.load() <= runs_if_done);
      }
      pt::check_still_works(pool);
    }
  });
}

template <class Pool>
void check_spawn(pt::alloc_scope scope) {
  pt::check_allocation_failures("spawn", [&](std::uint64_t k) {
    std::atomic<int> runs{0};
    bool accepted = false;
    {
      Pool pool(threads);
      auto t = count_run(runs);
      try {
        pt::fail_allocation armed(k, scope);
        pool.spawn(std::move(t));
        accepted = true;
      } catch (const std::bad_alloc&) {
      }
      pt::check_still_works(pool);
    }  // drains: an accepted task has run
    CHECK(runs.load() == (accepted ? 1 : 0));
  });
}

}  // namespace

TEST_CASE_TEMPLATE("coroutines pools: every operation under allocation failure", Pool, pc::textbook_pool,
                   pc::thread_pool) {
  for (const auto scope : scopes) {
    CAPTURE(static_cast<int>(scope));
    pt::check_post_allocation_failures<Pool>(threads, scope);
    // Across the end of the injection queue's first segment (511 items), where a push allocates.
    pt::check_post_allocation_failures<Pool>(threads, scope, 8, 505);
    check_spawn<Pool>(scope);
    check_sync_wait<Pool>(
        "schedule", scope, [](Pool& pool, std::atomic<int>& runs) { return hop(pool, runs); }, 42, 1);
    check_sync_wait<Pool>(
        "when_all", scope, [](Pool&, std::atomic<int>& runs) { return fork_two(runs); }, 3, 2);
    check_sync_wait<Pool>(
        "fork_scope", scope, [](Pool&, std::atomic<int>& runs) { return fork_two_work_first(runs); }, 3, 2);
    check_sync_wait<Pool>(
        "fork_scope, the deque growing", scope,
        [](Pool&, std::atomic<int>& runs) { return fork_chain(runs, chain_depth); }, chain_depth + 1,
        chain_depth + 1);
    check_sync_wait<Pool>(
        "channel send and receive", scope, [](Pool&, std::atomic<int>& runs) { return pipe(runs); }, 42, 1);
  }
}

TEST_CASE("coroutines thread_pool: sleep under allocation failure") {
  for (const auto scope : scopes) {
    CAPTURE(static_cast<int>(scope));
    check_sync_wait<pc::thread_pool>(
        "sleep", scope, [](pc::thread_pool& pool, std::atomic<int>& runs) { return nap(pool, runs); }, 7, 1);
  }
}
