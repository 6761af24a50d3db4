// bench_fibers — the fibers pool, every workload in blocking style: fork-join is spawn + join
// (the join suspends the fiber, or runs the child inline when no one has started it), external
// submission is post / spawn, and `memory` really suspends n fibers at once.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/fibers/channel.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/index_blocks.hpp>

#include <fmt/core.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace {
using namespace pools::bench;
using pools::fibers::join_handle;
using pools::fibers::thread_pool;

std::uint64_t fib(thread_pool& pool, int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  auto a = pool.spawn([&pool, n] { return fib(pool, n - 1); });
  const std::uint64_t b = fib(pool, n - 2);
  return a.join() + b;
}

std::uint64_t skynet(thread_pool& pool, std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  const std::uint64_t child = size / skynet_fanout;
  std::array<join_handle<std::uint64_t>, skynet_fanout - 1> parts;
  for (std::uint64_t i = 0; i + 1 < skynet_fanout; ++i) {
    parts[i] = pool.spawn([&pool, start = first + i * child, child] { return skynet(pool, start, child); });
  }
  std::uint64_t sum = skynet(pool, first + (skynet_fanout - 1) * child, child);
  for (auto& part : parts) sum += part.join();
  return sum;
}

std::uint64_t nqueens(thread_pool& pool, int n, const queens_board& board) {
  if (board.row == n) return 1;
  std::array<join_handle<std::uint64_t>, 32> parts;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) {
      parts[static_cast<std::size_t>(c)] =
          pool.spawn([&pool, n, &board, c] { return nqueens(pool, n, board.with(c)); });
    }
  }
  std::uint64_t sum = 0;
  for (auto& part : parts) {
    if (part.joinable()) sum += part.join();
  }
  return sum;
}

void matmul(thread_pool& pool, matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    std::array<join_handle<void>, 3> parts;
    for (int q = 0; q < 3; ++q) {
      parts[static_cast<std::size_t>(q)] = pool.spawn([&pool, c, a, b, q, round] {
        matmul(pool, c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2));
      });
    }
    matmul(pool, c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1));
    for (auto& part : parts) part.join();
  }
}

auto make = [](unsigned threads) { return std::make_unique<thread_pool>(threads); };

// A fork-join problem run from main(): the root becomes a fiber, main blocks in run().
template <class Body>
prepare_fn fork_join(Body body) {
  return [body](const params& p) -> repetition {
    std::shared_ptr<thread_pool> pool = make(p.threads);
    return [pool, body, n = p.n](rep_timer&, metrics&) { body(*pool, n); };
  };
}

// submit_future in the fibers' own spelling: spawn returns a join_handle; the shared workload
// calls get() on what the operation returns.
template <class R>
struct joined {
  join_handle<R> handle;
  R get() { return handle.join(); }
};
struct spawn_op {
  template <class F>
  auto operator()(thread_pool& pool, F&& f) const {
    return joined<std::invoke_result_t<std::decay_t<F>>>{pool.spawn(std::forward<F>(f))};
  }
};

// vector_fill: a root fiber spawns one fiber per block and joins them all.
struct spawn_blocks {
  template <class F>
  void operator()(thread_pool& pool, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    pool.run([&] {
      const pools::index_blocks<std::int64_t> split(first, last, blocks);
      std::vector<join_handle<void>> parts;
      parts.reserve(split.count());
      for (std::size_t k = 0; k < split.count(); ++k) {
        parts.push_back(pool.spawn([&f, range = split[k]] { f(range.first, range.second); }));
      }
      for (auto& part : parts) part.join();
    });
  }
};

// memory: n fibers suspended at once, each in recv() on one unbuffered channel. A fresh pool per
// repetition, so every repetition maps (and measures) its stacks anew; the pool returns them to
// the kernel when it is destroyed.
prepare_fn memory_workload() {
  return [](const params& p) -> repetition {
    return [n = p.n, threads = p.threads](rep_timer& timer, metrics& out) {
      auto pool = make(threads);
      pools::fibers::channel<int> release;
      pools::fibers::latch arrived(n);
      pools::fibers::latch finished(n);
      std::atomic<std::int64_t> closed_seen{0};
      const auto before = current_rss_bytes();
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) {
        pool->post([&] {
          arrived.count_down();
          if (!release.recv()) closed_seen.fetch_add(1, std::memory_order_relaxed);
          finished.count_down();
        });
      }
      arrived.wait();  // every fiber is in (or entering) recv(), on its own stack
      timer.stop();
      const auto after = current_rss_bytes();
      const auto stats = pool->stats();
      release.close();
      finished.wait();
      if (closed_seen.load() != n) {
        fail_verification(fmt::format("memory: {} of {} fibers saw the close", closed_seen.load(), n));
      }
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
      out["fibers_created"] = static_cast<double>(stats.fibers_created);
      out["stack_kib"] = static_cast<double>(pools::fibers::default_stack_size) / 1024.0;
    };
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite s("fibers");
  s.add("fib", fork_join([](thread_pool& pool, std::int64_t n) {
          const int k = static_cast<int>(n);
          check_fib(k, pool.run([&pool, k] { return fib(pool, k); }));
        }));
  s.add("skynet", fork_join([](thread_pool& pool, std::int64_t n) {
          const auto leaves = static_cast<std::uint64_t>(n);
          check_skynet(leaves, pool.run([&pool, leaves] { return skynet(pool, 0, leaves); }));
        }));
  s.add("nqueens", fork_join([](thread_pool& pool, std::int64_t n) {
          const int k = static_cast<int>(n);
          check_nqueens(k, pool.run([&pool, k] { return nqueens(pool, k, queens_board{}); }));
        }));
  s.add("matmul", [](const params& p) -> repetition {
    std::shared_ptr<thread_pool> pool = make(p.threads);
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [pool, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      pool->run([&] { matmul(*pool, problem->c(), problem->a(), problem->b()); });
      timer.stop();
      problem->check();
    };
  });
  s.add("submit", submit_workload(make));
  s.add("submit_future", submit_future_workload(make, spawn_op{}));
  s.add("wakeup", wakeup_workload(make));
  s.add("vector_fill", vector_fill_workload(make, spawn_blocks{}));
  s.add("memory", memory_workload());
  return s.main(argc, argv);
}
