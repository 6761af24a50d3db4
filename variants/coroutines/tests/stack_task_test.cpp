// SPDX-License-Identifier: MIT
// stack_task (frames on the worker's stack of frames, frame_stack.hpp) with fork_scope: results on
// 1, 2 and 4 workers, a stress test counting every task, exceptions at the join, children that
// suspend on an async_mutex or async_event and finish on another worker while the first keeps
// pushing frames (the stack given up, handed over and recycled), stacks recycled rather than
// grown, heap frames off the pool, a given-up stack of two segments freed LIFO, a child whose
// pop finds a task it spawned instead of its parent, results read by result(), and the misuses
// that end the process with a message: a release out of order, a stack_task kept by a task<T>
// across a suspension, and a worker stopping with frames on its stack.
#include <doctest/doctest.h>

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/frame_stack.hpp>
#include <pools/coroutines/stack_task.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <coroutine>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "test_support.hpp"

namespace pc = pools::coroutines;

namespace {

pc::stack_task<std::uint64_t> st_fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  pc::stack_task<std::uint64_t> a = st_fib(n - 1), b = st_fib(n - 2);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.call(b);
  co_await scope.join();
  co_return std::move(a).result() + std::move(b).result();
}

// A frame the tests watch being allocated: not inlined, since Clang elides the frame of a coroutine
// created and destroyed in one caller into the caller's own (no allocation to observe).
[[gnu::noinline]] pc::stack_task<int> st_leaf() {
  co_return 1;
}

std::uint64_t fib_of(int n) {
  std::uint64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
  return a;
}

// Skynet: a tree of fan-out 10; each leaf returns its number, each node the sum below it.
pc::stack_task<std::uint64_t> skynet(std::uint64_t num, std::uint64_t size) {
  if (size == 1) co_return num;
  const std::uint64_t step = size / 10;
  pc::stack_task<std::uint64_t> k0 = skynet(num, step), k1 = skynet(num + step, step),
                                k2 = skynet(num + 2 * step, step), k3 = skynet(num + 3 * step, step),
                                k4 = skynet(num + 4 * step, step), k5 = skynet(num + 5 * step, step),
                                k6 = skynet(num + 6 * step, step), k7 = skynet(num + 7 * step, step),
                                k8 = skynet(num + 8 * step, step), k9 = skynet(num + 9 * step, step);
  pc::fork_scope scope;
  co_await scope.fork(k0);
  co_await scope.fork(k1);
  co_await scope.fork(k2);
  co_await scope.fork(k3);
  co_await scope.fork(k4);
  co_await scope.fork(k5);
  co_await scope.fork(k6);
  co_await scope.fork(k7);
  co_await scope.fork(k8);
  co_await scope.call(k9);
  co_await scope.join();
  co_return co_await std::move(k0) + co_await std::move(k1) + co_await std::move(k2) +
      co_await std::move(k3) + co_await std::move(k4) + co_await std::move(k5) + co_await std::move(k6) +
      co_await std::move(k7) + co_await std::move(k8) + co_await std::move(k9);
}

// N-queens: a child per free column, in a stack_task_array (made in order, destroyed in reverse).
pc::stack_task<std::uint64_t> queens(int n, int row, std::uint32_t cols, std::uint32_t d1, std::uint32_t d2) {
  if (row == n) co_return 1;
  pc::stack_task_array<std::uint64_t, 16> kids;
  for (int c = 0; c < n; ++c) {
    const std::uint32_t bit = 1u << c, b1 = 1u << (row + c), b2 = 1u << (row - c + n);
    if ((cols & bit) == 0 && (d1 & b1) == 0 && (d2 & b2) == 0)
      kids.emplace([&] { return queens(n, row + 1, cols | bit, d1 | b1, d2 | b2); });
  }
  if (kids.size() == 0) co_return 0;
  pc::fork_scope scope;
  for (std::size_t i = 0; i + 1 < kids.size(); ++i) co_await scope.fork(kids[i]);
  co_await scope.call(kids[kids.size() - 1]);
  co_await scope.join();
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < kids.size(); ++i) sum += co_await std::move(kids[i]);
  co_return sum;
}

// An irregular tree: fan-out by node, some nodes take an async_mutex or yield to the pool (so
// their continuations move between workers and the stack is given up), every node counted.
pc::stack_task<std::uint64_t> irregular(pc::thread_pool& pool, pc::async_mutex& m, std::uint64_t seed,
                                        int depth, std::atomic<std::uint64_t>& ran, std::uint64_t& guarded) {
  ran.fetch_add(1, std::memory_order_relaxed);
  if (seed % 11 == 0) {
    auto lock = co_await m.scoped_lock();
    ++guarded;  // a plain counter: the mutex orders the increments
  }
  if (depth == 0) co_return 1;
  if (seed % 7 == 0) co_await pool.schedule();
  const std::uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  pc::stack_task<std::uint64_t> a = irregular(pool, m, s, depth - 1, ran, guarded);
  pc::stack_task<std::uint64_t> b = irregular(pool, m, s + 1, depth - 1, ran, guarded);
  pc::stack_task<std::uint64_t> c = irregular(pool, m, s + 2, seed % 3 == 0 ? depth - 1 : 0, ran, guarded);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.fork(b);
  co_await scope.call(c);
  co_await scope.join();
  // Read by result(): on this irregular tree, often after a join whose parent a thief took.
  co_return 1 + std::move(a).result() + std::move(b).result() + std::move(c).result();
}

pc::stack_task<int> st_throws(std::atomic<int>& finished, const char* what) {
  finished.fetch_add(1);
  throw std::runtime_error(what);
  co_return 0;  // NOLINT: unreachable, makes this a coroutine
}
pc::stack_task<int> st_counts(std::atomic<int>& finished) {
  finished.fetch_add(1);
  co_return 1;
}

}  // namespace

TEST_CASE("stack_task: fib, skynet and nqueens by work-first fork/join on 1, 2 and 4 workers") {
  for (std::size_t workers : {1u, 2u, 4u}) {
    pc::thread_pool pool(workers);
    CHECK(pc::sync_wait(pool, st_fib(0)) == 0);
    CHECK(pc::sync_wait(pool, st_fib(1)) == 1);
    CHECK(pc::sync_wait(pool, st_fib(22)) == fib_of(22));
    const std::uint64_t n = 100'000;
    CHECK(pc::sync_wait(pool, skynet(0, n)) == n * (n - 1) / 2);
    CHECK(pc::sync_wait(pool, queens(8, 0, 0, 0, 0)) == 92);
  }
}

TEST_CASE("stack_task: on the textbook pool and from a plain thread, frames come from the heap") {
  pc::textbook_pool pool(2);
  CHECK(pc::sync_wait(pool, st_fib(15)) == fib_of(15));
  // The root made on this thread, which has no stack of frames: a heap frame, freed here.
  const auto before = pc::frame_stack::this_thread_stats();
  {
    pc::stack_task<int> root = st_leaf();
    const auto after = pc::frame_stack::this_thread_stats();
    CHECK(!pc::frame_stack::this_thread_has_stack());
    CHECK(after.heap_frames == before.heap_frames + 1);
  }
}

TEST_CASE("stack_task: frames go on the worker's stack, and the stacks are recycled, not grown") {
  pc::thread_pool pool(1);
  auto stats_on_worker = [](pc::thread_pool& p) {
    auto probe = []() -> pc::task<pc::frame_stack::stats> {
      CHECK(pc::frame_stack::this_thread_has_stack());
      co_return pc::frame_stack::this_thread_stats();
    };
    return pc::sync_wait(p, probe());
  };
  const auto before = stats_on_worker(pool);
  CHECK(pc::sync_wait(pool, st_fib(20)) == fib_of(20));
  const auto after = stats_on_worker(pool);
  // fib(20) makes 21891 frames; the root's is on the heap (made on this thread), all others on
  // the worker's stack: none from the heap there.
  CHECK(after.heap_frames == before.heap_frames);
  // One worker: its fairness tick sends a finishing child to the worker loop every 61 finishes
  // (fork_state.hpp, case 3), which gives the stack up; the abandoned stacks come back.
  CHECK(after.abandoned > before.abandoned);
  CHECK(after.recycled - before.recycled == after.abandoned - before.abandoned);

  // Repeated runs on 1 and 4 workers: the number of live stacks stays bounded by the caches.
  for (std::size_t workers : {1u, 4u}) {
    pc::thread_pool p(workers);
    const auto start = pc::frame_stack::process_totals();
    std::uint64_t live_after_warmup = 0;
    for (int run = 0; run < 30; ++run) {
      REQUIRE(pc::sync_wait(p, st_fib(18)) == fib_of(18));
      const auto t = pc::frame_stack::process_totals();
      const std::uint64_t live =
          t.stacks_created - t.stacks_deleted - (start.stacks_created - start.stacks_deleted);
      if (run == 4) live_after_warmup = live;
      // At most one current and cache_limit cached stacks per worker, and stacks in flight.
      CHECK(live <= workers * (pc::frame_stack::cache_limit + 1));
    }
    const auto end = pc::frame_stack::process_totals();
    MESSAGE("workers " << workers << ": stacks created " << end.stacks_created - start.stacks_created
                       << ", live after warm-up " << live_after_warmup);
    if (workers == 1) {
      // One thread frees what it abandons: every stack comes back to its own cache.
      CHECK(end.stacks_created - start.stacks_created <= pc::frame_stack::cache_limit + 1);
    }
  }
}

TEST_CASE("stack_task: a child's exception is delivered at the join, after every child finished") {
  pc::thread_pool pool(2);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> finished{0};
    auto parent = [&]() -> pc::stack_task<int> {
      pc::stack_task<int> a = st_throws(finished, "forked"), b = st_counts(finished),
                          c = st_throws(finished, "called");
      pc::fork_scope scope;
      co_await scope.fork(a);  // does not throw here
      co_await scope.fork(b);
      co_await scope.call(c);
      std::string what;
      try {
        co_await scope.join();
      } catch (const std::runtime_error& e) {
        CHECK(finished.load() == 3);  // no child outlives the join
        what = e.what();
      }
      CHECK((what == "forked" || what == "called"));
      co_return co_await std::move(b);
    };
    REQUIRE(pc::sync_wait(pool, parent()) == 1);
  }
  auto root_throws = [](std::atomic<int>& finished) -> pc::stack_task<int> {
    pc::stack_task<int> a = st_throws(finished, "awaited");
    co_return co_await std::move(a);
  };
  std::atomic<int> finished{0};
  CHECK_THROWS_WITH_AS(pc::sync_wait(pool, root_throws(finished)), "awaited", std::runtime_error);
}

TEST_CASE("stack_task: result() after the join: a child's value or exception; of an unrun task, an error") {
  pc::thread_pool pool(2);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> finished{0};
    auto parent = [&]() -> pc::stack_task<int> {
      pc::stack_task<int> a = st_counts(finished), b = st_throws(finished, "forked"), c = st_counts(finished);
      CHECK_THROWS_WITH_AS(std::move(a).result(),
                           "pools::coroutines::stack_task: result() of a task that has not finished",
                           std::invalid_argument);  // not run yet
      pc::fork_scope scope;
      co_await scope.fork(a);
      co_await scope.fork(b);
      co_await scope.call(c);
      bool threw = false;
      try {
        co_await scope.join();
      } catch (const std::runtime_error&) {
        threw = true;
      }
      CHECK(threw);
      CHECK(finished.load() == 3);
      CHECK_THROWS_WITH_AS(std::move(b).result(), "forked", std::runtime_error);  // b's own, again
      co_return std::move(a).result() + std::move(c).result();
    };
    REQUIRE(pc::sync_wait(pool, parent()) == 2);
  }
  CHECK(pc::sync_wait(pool, st_fib(20)) == fib_of(20));  // st_fib reads its children by result()
}

// The handover tests below make it deterministic that the child suspends on one worker (X) and
// resumes on the other (Y) while the parent goes on on X pushing and popping frames: Y is held by
// a task of the test's own (a blocker, or the lock's holder) until the parent runs on X again, so
// nobody steals the parent's continuation, and the releaser on Y queues the child on Y's deque.
// X keeps pushing frames (st_fib(12) again and again) until the child has freed its frames on Y:
// without the give-up at the child's suspension (stack_task.hpp, await_transform; frame_stack.hpp,
// case c) those frees would be on X's current stack while X pushes on it: a data race under TSan,
// the misuse check's terminate under ASan (every release takes the slow path), and the stack's
// count of given-up stacks would not move.
TEST_CASE("stack_task: a child that suspends on an async_event finishes on another worker") {
  // The child waits on an event with frames of its own children on the stack. X gives the stack
  // up (case c), its loop takes the parent's continuation, and the parent pushes and pops frames
  // on X's new stack until the child, resumed on Y, has freed its children from the given-up
  // one. The parent frees the child's frame, the given-up stack's last, after the join: that
  // release recycles the stack.
  pc::thread_pool pool(2);
  int laps_total = 0;
  for (int round = 0; round < 20; ++round) {
    pc::async_event go;
    std::atomic<bool> holding{false}, parent_running{false}, child_done{false};
    std::thread::id before, after, parent_thread;
    std::uint64_t abandoned_before = 0, abandoned_after = 0, recycled_before = 0, recycled_after = 0;
    auto child = [&]() -> pc::stack_task<std::uint64_t> {
      std::uint64_t r = 0;
      {
        pc::stack_task<std::uint64_t> below = st_fib(10), above = st_fib(9);
        before = coro_test::thread_now();
        abandoned_before = pc::frame_stack::this_thread_stats().abandoned;
        co_await go;  // suspended with `below` and `above` on X's stack, which X gives up
        after = coro_test::thread_now();
        r = co_await std::move(below) + co_await std::move(above);
      }  // `above`, then `below`, freed here, on Y, from the stack X gave up
      child_done.store(true, std::memory_order_release);
      co_return r;
    };
    auto blocker = [&]() -> pc::task<void> {
      holding.store(true, std::memory_order_release);
      CHECK(coro_test::wait_for_flag(parent_running));  // holds Y: nobody steals the parent
      go.set();  // queues the child on Y's deque: Y runs it when this task ends
      co_return;
    };
    int laps = 0;
    auto parent = [&]() -> pc::stack_task<std::uint64_t> {
      std::uint64_t r = 0;
      {
        pc::stack_task<std::uint64_t> c = child();  // the bottom frame of the stack X gives up
        {
          pc::fork_scope scope;
          pool.spawn(blocker());
          CHECK(coro_test::wait_for_flag(holding));
          co_await scope.fork(c);  // the child runs here, on X, until it suspends
          parent_thread = coro_test::thread_now();
          abandoned_after = pc::frame_stack::this_thread_stats().abandoned;
          parent_running.store(true, std::memory_order_release);
          std::uint64_t pushed = 0;
          while (!child_done.load(std::memory_order_acquire)) {  // frames on X while Y frees
            pc::stack_task<std::uint64_t> f = st_fib(12);
            pushed += co_await std::move(f);
            ++laps;
          }
          CHECK(pushed == static_cast<std::uint64_t>(laps) * fib_of(12));
          co_await scope.join();
        }
        r = co_await std::move(c);
        recycled_before = pc::frame_stack::this_thread_stats().recycled;
      }  // c freed: the given-up stack's last frame, so it is recycled here
      recycled_after = pc::frame_stack::this_thread_stats().recycled;
      co_return r;
    };
    REQUIRE(pc::sync_wait(pool, parent()) == fib_of(10) + fib_of(9));
    CHECK(parent_thread == before);  // the parent went on on X...
    CHECK(after != before);          // ...and the child on Y
    CHECK(abandoned_after == abandoned_before + 1);
    CHECK(recycled_after == recycled_before + 1);
    laps_total += laps;
  }
  MESSAGE("st_fib(12) laps on the first worker while the child was away: " << laps_total);
  CHECK(laps_total > 0);
}

TEST_CASE("stack_task: a child that spawns before it ends pops the spawned task, not its parent") {
  // One worker, so the order is fixed. The fork pushes the parent's continuation; the child
  // spawns a task, which goes on top of it; at the child's end the pop finds that task, not
  // the parent (fork_state::child_done's case 2 holding an item): the child arrives at the
  // count, the task runs next, then the worker loop pops the parent, whose join is then free.
  // Every round one spawned task, and nothing lost: the log says what ran in which order.
  pc::thread_pool pool(1);
  for (int round = 0; round < 100; ++round) {
    std::string log;
    auto spawned = [&]() -> pc::task<void> {
      log += 'X';
      co_return;
    };
    auto child = [&]() -> pc::stack_task<int> {
      log += 'c';
      pool.spawn(spawned());
      co_return 1;
    };
    auto parent = [&]() -> pc::stack_task<int> {
      pc::stack_task<int> a = child(), b = st_leaf();
      pc::fork_scope scope;
      co_await scope.fork(a);
      log += 'p';  // the parent's continuation: after the spawned task
      co_await scope.call(b);
      co_await scope.join();
      log += 'j';
      co_return co_await std::move(a) + co_await std::move(b);
    };
    REQUIRE(pc::sync_wait(pool, parent()) == 2);
    REQUIRE(log == "cXpj");
  }
}

TEST_CASE("stack_task: a child that waits for an async_mutex is resumed by the unlocking worker") {
  // As above, with the lock's holder on Y: the child waits for the lock on X (giving X's stack up),
  // the unlock on Y queues it on Y's deque.
  pc::thread_pool pool(2);
  pc::async_mutex m;
  int laps_total = 0;
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> holder_has_lock{false}, release{false}, waiter_done{false};
    std::thread::id waiter_before, waiter_after, parent_thread;
    std::uint64_t abandoned_before = 0, abandoned_after = 0, recycled_before = 0, recycled_after = 0;
    // Holds the lock, and Y, until the parent runs on X again.
    auto holder = [&]() -> pc::task<void> {
      auto lock = co_await m.scoped_lock();
      holder_has_lock.store(true, std::memory_order_release);
      CHECK(coro_test::wait_for_flag(release));
    };
    auto waiter = [&]() -> pc::stack_task<std::uint64_t> {
      std::uint64_t r = 0;
      {
        pc::stack_task<std::uint64_t> mine = st_fib(12);
        waiter_before = coro_test::thread_now();
        abandoned_before = pc::frame_stack::this_thread_stats().abandoned;
        auto lock = co_await m.scoped_lock();  // suspends: the holder has it
        waiter_after = coro_test::thread_now();
        r = co_await std::move(mine);
      }  // the lock released, `mine` freed on Y from the stack X gave up
      waiter_done.store(true, std::memory_order_release);
      co_return r;
    };
    int laps = 0;
    auto parent = [&]() -> pc::stack_task<std::uint64_t> {
      std::uint64_t r = 0;
      {
        pc::stack_task<std::uint64_t> w = waiter();
        {
          pc::fork_scope scope;
          pool.spawn(holder());
          CHECK(coro_test::wait_for_flag(holder_has_lock));
          co_await scope.fork(w);
          parent_thread = coro_test::thread_now();
          abandoned_after = pc::frame_stack::this_thread_stats().abandoned;
          release.store(true, std::memory_order_release);
          std::uint64_t pushed = 0;
          while (!waiter_done.load(std::memory_order_acquire)) {  // frames on X while Y frees
            pc::stack_task<std::uint64_t> f = st_fib(12);
            pushed += co_await std::move(f);
            ++laps;
          }
          CHECK(pushed == static_cast<std::uint64_t>(laps) * fib_of(12));
          co_await scope.join();
        }
        r = co_await std::move(w);
        recycled_before = pc::frame_stack::this_thread_stats().recycled;
      }
      recycled_after = pc::frame_stack::this_thread_stats().recycled;
      co_return r;
    };
    REQUIRE(pc::sync_wait(pool, parent()) == fib_of(12));
    CHECK(parent_thread == waiter_before);
    CHECK(waiter_after != waiter_before);
    CHECK(abandoned_after == abandoned_before + 1);
    CHECK(recycled_after == recycled_before + 1);
    laps_total += laps;
  }
  MESSAGE("st_fib(12) laps on the first worker while the waiter was away: " << laps_total);
  CHECK(laps_total > 0);
}

TEST_CASE("stack_task: stress — irregular trees with locks and yields on 4 workers, every task counted") {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(coro_test::sanitized() ? 20 : 5);
  const int rounds = coro_test::sanitized() ? 20 : 200;
  pc::thread_pool pool(4);
  pc::async_mutex m;
  int done = 0;
  for (int r = 0; r < rounds && std::chrono::steady_clock::now() < deadline; ++r, ++done) {
    std::atomic<std::uint64_t> ran{0};
    std::uint64_t guarded = 0;
    const std::uint64_t counted = pc::sync_wait(pool, irregular(pool, m, 12345 + r, 9, ran, guarded));
    REQUIRE(counted == ran.load());
    REQUIRE(pc::sync_wait(pool, st_fib(16)) == fib_of(16));
  }
  CHECK(done >= 1);
  MESSAGE("rounds: " << done << ", steals: " << pool.stats().steals);
}

namespace {

// Runs `body` in a child process that is expected to die of std::terminate's abort; returns what
// it wrote to stderr, or "(exited)" when it did not die of SIGABRT.
template <class F>
std::string stderr_of_abort(F body) {
  int err[2];
  REQUIRE(pipe(err) == 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // not doctest's crash report: die of the abort
    dup2(err[1], 2);
    close(err[0]);
    body();
    _exit(0);  // not reached when the misuse is caught
  }
  close(err[1]);
  std::string message;
  char buf[256];
  for (ssize_t k; (k = read(err[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<std::size_t>(k));
  close(err[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) return "(exited)";
  return message;
}

// An awaitable that parks the coroutine until the test resumes it by hand, on the test's thread.
struct park {
  std::coroutine_handle<>* out;
  std::atomic<bool>* parked;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) const noexcept {
    *out = h;
    parked->store(true, std::memory_order_release);
  }
  void await_resume() const noexcept {}
};

}  // namespace

TEST_CASE("stack_task: a frame released out of order ends the process with a message") {
  const std::string message = stderr_of_abort([] {
    pc::frame_stack::attach_this_thread();
    void* a = pc::frame_stack::allocate(100);
    void* b = pc::frame_stack::allocate(100);
    pc::frame_stack::release(a, 100);  // b is the top: misuse
    pc::frame_stack::release(b, 100);
  });
  CHECK(message.find("not the top of its stack") != std::string::npos);

  // The same order, kept: allocation and release in LIFO order pass, and leave the stack empty
  // with its second segment kept for the next time.
  pc::frame_stack::attach_this_thread();
  const auto stats0 = pc::frame_stack::this_thread_stats();
  const auto totals0 = pc::frame_stack::process_totals();
  pc::detail::stack_of_frames* const s = pc::detail::tl_frame_stack.current;
  void* a = pc::frame_stack::allocate(100);
  void* b = pc::frame_stack::allocate(30000);  // beyond the first segment: a second one (32 KiB)
  void* c = pc::frame_stack::allocate(100);
  CHECK(pc::frame_stack::process_totals().segments_created == totals0.segments_created + 1);
  pc::frame_stack::release(c, 100);
  pc::frame_stack::release(b, 30000);
  pc::frame_stack::release(a, 100);
  CHECK(pc::detail::tl_frame_stack.current == s);
  CHECK(s->top == s->base);  // empty again, in its first segment
  void* again = pc::frame_stack::allocate(30000);
  CHECK(pc::frame_stack::process_totals().segments_created == totals0.segments_created + 1);  // reused
  pc::frame_stack::release(again, 30000);
  pc::frame_stack::leave_strand();  // finds the stack empty (over its emptied second segment)
  CHECK(pc::detail::tl_frame_stack.current == s);
  CHECK(s->top == s->base);
  const auto stats1 = pc::frame_stack::this_thread_stats();
  CHECK(stats1.abandoned == stats0.abandoned);
  CHECK(stats1.recycled == stats0.recycled);
  CHECK(stats1.heap_frames == stats0.heap_frames);
  pc::frame_stack::detach_this_thread();
}

TEST_CASE("stack_task: a stack given up with its first segment empty is freed LIFO and recycled") {
  // A frame too big for the first segment goes on a second one, leaving the first empty; the
  // give-up must tag the first frame of the second segment as the bottom, and the releases cross
  // back over the empty segment (the slow paths of a multi-segment stack, with a give-up).
  pc::frame_stack::attach_this_thread();
  const auto stats0 = pc::frame_stack::this_thread_stats();
  pc::detail::stack_of_frames* const s = pc::detail::tl_frame_stack.current;
  void* big = pc::frame_stack::allocate(20000);  // more than the 16 KiB first segment holds
  void* small = pc::frame_stack::allocate(100);
  pc::frame_stack::leave_strand();
  CHECK(pc::frame_stack::this_thread_stats().abandoned == stats0.abandoned + 1);
  CHECK(pc::detail::tl_frame_stack.current != s);  // a fresh stack for what comes next
  CHECK(s->abandoned);
  pc::frame_stack::release(small, 100);
  pc::frame_stack::release(big, 20000);  // the bottom: recycles s
  const auto stats1 = pc::frame_stack::this_thread_stats();
  CHECK(stats1.abandoned == stats0.abandoned + 1);
  CHECK(stats1.recycled == stats0.recycled + 1);
  CHECK(pc::detail::tl_frame_stack.cache == s);  // back in this thread's cache, reset
  CHECK(!s->abandoned);
  CHECK(s->top == s->base);
  pc::frame_stack::detach_this_thread();

  // The bottom frame released first is out of order: it is not the top of its stack. (The check
  // comes before the bottom frame's own "released before the others" check, which is why that
  // one guards only mark_bottom's choice of the bottom frame.)
  const std::string message = stderr_of_abort([] {
    pc::frame_stack::attach_this_thread();
    void* big = pc::frame_stack::allocate(20000);
    void* small = pc::frame_stack::allocate(100);
    pc::frame_stack::leave_strand();
    pc::frame_stack::release(big, 20000);  // misuse: `small` is still on the stack
    pc::frame_stack::release(small, 100);
  });
  CHECK(message.find("not the top of its stack") != std::string::npos);
}

TEST_CASE("stack_task: a stack_task made by a task<T> and kept across a suspension ends the process") {
  // The misuse stack_task.hpp forbids: a task<T> makes a stack_task (its frame on the worker's
  // current stack), suspends holding it, and is resumed on another thread, which destroys it
  // while the worker goes on using that stack. Made deterministic: the task is resumed by hand
  // on this (the child process's main) thread, after a stack_task run by sync_wait from another
  // thread has put a frame above it on the worker's stack; the release therefore misses the fast
  // path in every build, and the slow path finds a stack that is neither this thread's nor given
  // up.
  const std::string message = stderr_of_abort([] {
    pc::thread_pool pool(1);
    std::coroutine_handle<> parked_at{};
    std::atomic<bool> parked{false}, holding{false}, never{false};
    auto g = [&]() -> pc::task<void> {
      pc::stack_task<int> kept = st_leaf();  // the misuse: on the worker's stack
      co_await park{&parked_at, &parked};
    };  // `kept` is destroyed on the thread that resumed g
    pool.spawn(g());
    if (!coro_test::wait_for_flag(parked)) _exit(1);
    auto hold = [&]() -> pc::stack_task<int> {
      pc::stack_task<int> above = st_leaf();  // above `kept` on the worker's stack
      holding.store(true, std::memory_order_release);
      coro_test::wait_for_flag(never, std::chrono::seconds(60));
      co_return co_await std::move(above);
    };
    std::thread holder([&] { (void)pc::sync_wait(pool, hold()); });
    holder.detach();
    if (!coro_test::wait_for_flag(holding)) _exit(1);
    parked_at.resume();  // g goes on here and destroys `kept`: std::terminate
    _exit(0);            // not reached (the pool's worker is still held)
  });
  CHECK(message.find("its stack was never given up") != std::string::npos);
}

TEST_CASE("stack_task: a worker that stops with frames on its current stack ends the process") {
  // The stack is empty when a worker stops unless a stack_task was kept across a suspension that
  // never ended: freeing the stack would leave that frame dangling.
  const std::string message = stderr_of_abort([] {
    pc::frame_stack::attach_this_thread();
    (void)pc::frame_stack::allocate(100);
    pc::frame_stack::detach_this_thread();
  });
  CHECK(message.find("a worker stopped with frames on its stack") != std::string::npos);
}
