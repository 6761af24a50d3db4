// SPDX-License-Identifier: MIT
// One fork-join, written five ways: the same recursive fib(n) on each of the four pools in its own
// idiom, and once as std::execution senders (docs/std-execution.md walks through it).
//
//   build/examples/five_ways [n]      prints each way's result and time; exits 1 on a wrong result
//
// The five compute the same sum with the same sequential leaves (fib_seq below the cutoff) and
// differ in how a fork is spelled, where a waiting parent lives, and how deep they may fork:
// fibers, coroutines and reactor fork down to the cutoff; futures forks once (a task may not wait
// on its own pool); senders fork to a fixed depth (their type is the whole graph).
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/execution.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/futures/thread_pool.hpp>
#include <pools/reactor/executor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <stdexec/execution.hpp>
#include <string>

// A named namespace, not an anonymous one: the coroutine pool wraps a posted task in a coroutine
// frame defined in its header, and GCC warns (-Wsubobject-linkage) when such a frame holds a type
// of this file's anonymous namespace.
namespace five_ways {

constexpr int cutoff = 16;  // below it, a call; at or above it, a fork

std::uint64_t fib_seq(int n) {
  return n < 2 ? static_cast<std::uint64_t>(n) : fib_seq(n - 1) + fib_seq(n - 2);
}

// 1. futures: a task may not wait for a task of its own pool (a full pool of waiting parents
//    deadlocks: variants/futures/README.md), so only the caller, outside the pool, forks. One
//    level of parallelism: the caller submits fib(n-1) and computes fib(n-2) itself.
std::uint64_t fib_futures(pools::futures::thread_pool& pool, int n) {
  std::future<std::uint64_t> left = pool.submit_task([n] { return fib_seq(n - 1); });
  const std::uint64_t right = fib_seq(n - 2);
  return left.get() + right;
}

// 2. fibers: spawn a child, compute the other half, join. join() suspends this fiber (its stack
//    is kept), and the worker thread runs other fibers meanwhile.
std::uint64_t fib_fibers(pools::fibers::thread_pool& pool, int n) {
  if (n < cutoff) return fib_seq(n);
  auto left = pool.spawn([&pool, n] { return fib_fibers(pool, n - 1); });
  const std::uint64_t right = fib_fibers(pool, n - 2);
  return left.join() + right;
}

// 3. coroutines: co_await when_all(children): the parent's frame waits, no stack, no thread.
pools::coroutines::task<std::uint64_t> fib_coroutines(int n) {
  if (n < cutoff) co_return fib_seq(n);
  auto [a, b] = co_await pools::coroutines::when_all(fib_coroutines(n - 1), fib_coroutines(n - 2));
  co_return a + b;
}

// 4. reactor: nobody waits. A node counts its children down; the last one to finish runs the
//    parent's continuation (adds the sum into the parent's node), and so on up to the root.
struct node {
  std::atomic<int> pending{2};
  std::atomic<std::uint64_t> sum{0};
  std::function<void(std::uint64_t)> done;  // the continuation: what the parent does next
};
template <class Executor>
void fib_reactor(Executor& ex, int n, std::function<void(std::uint64_t)> done) {
  if (n < cutoff) return done(fib_seq(n));
  auto join = std::make_shared<node>();
  join->done = std::move(done);
  auto child_done = [join](std::uint64_t v) {
    join->sum.fetch_add(v, std::memory_order_relaxed);
    // acq_rel: the last child to arrive must see the other child's add before reading the sum.
    if (join->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) join->done(join->sum.load());
  };
  ex.post([&ex, n, child_done] { fib_reactor(ex, n - 1, child_done); });
  fib_reactor(ex, n - 2, child_done);
}

// 5. senders: when_all of two senders, the first started on the pool. A sender's type is its
//    whole graph, so the recursion is unrolled to a fixed depth by a template parameter (main uses
//    2: four leaves, each a sequential fib) and its type, and compile time, double with each level;
//    deeper recursion needs type erasure (exec::any_sender_of), which allocates at every fork.
template <int Depth, class Scheduler>
auto fib_senders(Scheduler sched, int n) {
  if constexpr (Depth == 0) {
    return stdexec::just(fib_seq(n));
  } else {
    return stdexec::when_all(stdexec::starts_on(sched, stdexec::just() | stdexec::let_value([sched, n] {
                                                         return fib_senders<Depth - 1>(sched, n - 1);
                                                       })),
                             fib_senders<Depth - 1>(sched, n - 2)) |
           stdexec::then(std::plus<>{});
  }
}

template <class F>
bool report(const char* way, std::uint64_t expected, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t got = f();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-11s fib = %llu  %8.1f ms%s\n", way, static_cast<unsigned long long>(got), ms,
              got == expected ? "" : "  WRONG");
  return got == expected;
}

}  // namespace five_ways

using namespace five_ways;

int main(int argc, char** argv) {
  int n = 30;
  if (argc > 1) {
    char* end = nullptr;
    const long v = std::strtol(argv[1], &end, 10);
    if (*end != '\0' || v < cutoff || v > 40) {
      std::fprintf(stderr, "five_ways: n must be a whole number from %d to 40, not '%s'\n", cutoff, argv[1]);
      return 2;
    }
    n = static_cast<int>(v);
  }
  const std::uint64_t expected = fib_seq(n);
  const unsigned threads = 2;
  bool ok = true;

  pools::futures::thread_pool futures_pool(threads);
  ok &= report("futures", expected, [&] { return fib_futures(futures_pool, n); });

  pools::fibers::thread_pool fibers_pool(threads);
  ok &=
      report("fibers", expected, [&] { return fibers_pool.run([&] { return fib_fibers(fibers_pool, n); }); });

  pools::coroutines::thread_pool coroutines_pool(threads);
  ok &= report("coroutines", expected,
               [&] { return pools::coroutines::sync_wait(coroutines_pool, fib_coroutines(n)); });

  pools::reactor::per_thread_executor reactor(threads);
  ok &= report("reactor", expected, [&] {
    std::promise<std::uint64_t> result;  // only the caller, outside the reactor, blocks
    reactor.post([&] { fib_reactor(reactor, n, [&result](std::uint64_t v) { result.set_value(v); }); });
    return result.get_future().get();
  });

  // The senders run on the coroutine pool through pools::as_scheduler (any of the four would do).
  ok &= report("senders", expected, [&] {
    auto [v] = stdexec::sync_wait(fib_senders<2>(pools::as_scheduler(coroutines_pool), n)).value();
    return v;
  });
  return ok ? 0 : 1;
}
