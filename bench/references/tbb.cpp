// SPDX-License-Identifier: MIT
// bench_tbb — oneTBB, the reference every variant's fork-join is compared with.
// Fork-join is spelled the TBB way: tbb::task_group run()/wait() inside a task_arena of T threads
// (the calling thread joins the arena, so T threads work). External submission uses
// task_arena::enqueue into an arena whose T slots are all for TBB workers.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <array>
#include <atomic>
#include <memory>

namespace {
using namespace pools::bench;

// TBB's market allows hardware_concurrency - 1 workers unless told otherwise; an arena of T
// workers needs T.
struct tbb_runtime {
  explicit tbb_runtime(unsigned threads)
      : limit(tbb::global_control::max_allowed_parallelism, threads + 1), arena(static_cast<int>(threads)) {}
  tbb::global_control limit;
  tbb::task_arena arena;
};

// pools::Executor over an arena with no slot reserved for an external thread.
class tbb_executor {
 public:
  explicit tbb_executor(std::size_t threads)
      : limit_(tbb::global_control::max_allowed_parallelism, threads + 1),
        arena_(static_cast<int>(threads), 0),
        threads_(threads) {}
  ~tbb_executor() {  // drain, as the concept requires: enqueued tasks have no other join
    while (outstanding_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }
  template <class F>
  void post(F&& f) {
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    arena_.enqueue(enqueued{this, pools::task_function(std::forward<F>(f))});
  }
  std::size_t concurrency() const { return threads_; }

 private:
  // TBB calls an enqueued functor through a const reference; a task (which may own a promise)
  // is called once and mutably, hence the mutable member.
  struct enqueued {
    tbb_executor* self;
    mutable pools::task_function fn;
    void operator()() const {
      pools::invoke_reporting(fn);
      self->outstanding_.fetch_sub(1, std::memory_order_release);
    }
  };
  tbb::global_control limit_;
  tbb::task_arena arena_;
  std::size_t threads_;
  std::atomic<std::size_t> outstanding_{0};
};

std::uint64_t fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
  tbb::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  tg.wait();
  return a + b;
}

std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  std::array<std::uint64_t, skynet_fanout> parts{};
  const std::uint64_t child = size / skynet_fanout;
  tbb::task_group tg;
  for (int i = 0; i + 1 < skynet_fanout; ++i) {
    tg.run([&, i] {
      parts[static_cast<std::size_t>(i)] = skynet(first + static_cast<std::uint64_t>(i) * child, child);
    });
  }
  parts[skynet_fanout - 1] = skynet(first + (skynet_fanout - 1) * child, child);
  tg.wait();
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

std::uint64_t nqueens(int n, const queens_board& board) {
  if (board.row == n) return 1;
  std::array<std::uint64_t, 32> parts{};
  tbb::task_group tg;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c))
      tg.run([&, c] { parts[static_cast<std::size_t>(c)] = nqueens(n, board.with(c)); });
  }
  tg.wait();
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

void matmul(matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    tbb::task_group tg;
    for (int q = 0; q < 3; ++q) {
      tg.run([=] { matmul(c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2)); });
    }
    matmul(c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1));
    tg.wait();
  }
}

template <class F>
prepare_fn in_arena(F body) {
  return [body](const params& p) -> repetition {
    auto rt = std::make_shared<tbb_runtime>(p.threads);
    return [rt, body, n = p.n](rep_timer& timer, metrics& m) { body(rt->arena, n, timer, m); };
  };
}

auto make_executor = [](unsigned threads) { return std::make_unique<tbb_executor>(threads); };

struct tbb_blocks {  // vector_fill with exactly `blocks` TBB tasks
  template <class F>
  void operator()(tbb_executor&, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    const auto grain = std::max<std::int64_t>(
        1, (last - first + static_cast<std::int64_t>(blocks) - 1) / static_cast<std::int64_t>(blocks));
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(first, last, static_cast<std::size_t>(grain)),
        [&](const tbb::blocked_range<std::int64_t>& r) { f(r.begin(), r.end()); }, tbb::simple_partitioner());
  }
};

}  // namespace

int main(int argc, char** argv) {
  suite s("tbb");
  s.add("fib", in_arena([](tbb::task_arena& arena, std::int64_t n, rep_timer&, metrics&) {
          std::uint64_t r = 0;
          arena.execute([&] { r = fib(static_cast<int>(n)); });
          check_fib(static_cast<int>(n), r);
        }));
  s.add("skynet", in_arena([](tbb::task_arena& arena, std::int64_t n, rep_timer&, metrics&) {
          std::uint64_t r = 0;
          arena.execute([&] { r = skynet(0, static_cast<std::uint64_t>(n)); });
          check_skynet(static_cast<std::uint64_t>(n), r);
        }));
  s.add("nqueens", in_arena([](tbb::task_arena& arena, std::int64_t n, rep_timer&, metrics&) {
          std::uint64_t r = 0;
          arena.execute([&] { r = nqueens(static_cast<int>(n), queens_board{}); });
          check_nqueens(static_cast<int>(n), r);
        }));
  s.add("matmul", [](const params& p) -> repetition {
    auto rt = std::make_shared<tbb_runtime>(p.threads);
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [rt, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      rt->arena.execute([&] { matmul(problem->c(), problem->a(), problem->b()); });
      timer.stop();
      problem->check();
    };
  });
  s.add("submit", submit_workload(make_executor));
  s.add("submit_future", submit_future_workload(make_executor));
  s.add("wakeup", wakeup_workload(make_executor));
  s.add("vector_fill", [](const params& p) -> repetition {
    // tbb::parallel_for must run inside the arena to use its T threads.
    auto rt = std::make_shared<tbb_runtime>(p.threads);
    auto inner = vector_fill_workload(make_executor, tbb_blocks{})(p);
    return [rt, inner](rep_timer& timer, metrics& m) { rt->arena.execute([&] { inner(timer, m); }); };
  });
  s.unsupported("memory",
                "oneTBB tasks run to completion; a task cannot be suspended without blocking its thread "
                "(tbb::task::suspend exists but keeps a whole stack per task, not comparable)");
  return s.main(argc, argv);
}
