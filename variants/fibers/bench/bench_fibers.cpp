// SPDX-License-Identifier: MIT
// bench_fibers — the fibers pools, every workload in blocking style: fork-join is spawn + join
// (the join suspends the fiber; the tuned pool runs the child inline when no one has started it),
// external submission is post / spawn, and `memory` really suspends n fibers at once.
//
// POOLS_BENCH_POOL=textbook (pools::bench::pool_from_environment; the `textbook` line of
// flavours.txt) measures the textbook_pool as subject fibers/textbook; unset or `tuned`, the
// work-stealing thread_pool. The workloads are templates over the pool type: both pools run the
// same code, except `memory`, which suspends its fibers in each pool's own primitive.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/fibers/channel.hpp>
#include <pools/fibers/join_handle.hpp>
#include <pools/fibers/latch.hpp>
#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/index_blocks.hpp>

#include <fmt/core.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <utility>
#include <vector>

namespace {
using namespace pools::bench;
using pools::fibers::textbook_pool;
using pools::fibers::thread_pool;

// What Pool::spawn returns for a function returning R: join_handle<R> or textbook_pool::handle<R>.
template <class Pool, class R>
using handle_t = decltype(std::declval<Pool&>().spawn(std::declval<R (*)()>()));

// Runs f as a fiber of the pool and waits from main() (thread_pool::run, spelled for both pools).
template <class Pool, class F>
auto run(Pool& pool, F&& f) {
  return pool.spawn(std::forward<F>(f)).join();
}

template <class Pool>
std::uint64_t fib(Pool& pool, int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  auto a = pool.spawn([&pool, n] { return fib(pool, n - 1); });
  const std::uint64_t b = fib(pool, n - 2);
  return a.join() + b;
}

template <class Pool>
std::uint64_t skynet(Pool& pool, std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  const std::uint64_t child = size / skynet_fanout;
  std::array<handle_t<Pool, std::uint64_t>, skynet_fanout - 1> parts;
  for (std::uint64_t i = 0; i + 1 < skynet_fanout; ++i) {
    parts[i] = pool.spawn([&pool, start = first + i * child, child] { return skynet(pool, start, child); });
  }
  std::uint64_t sum = skynet(pool, first + (skynet_fanout - 1) * child, child);
  for (auto& part : parts) sum += part.join();
  return sum;
}

template <class Pool>
std::uint64_t nqueens(Pool& pool, int n, const queens_board& board) {
  if (board.row == n) return 1;
  std::array<handle_t<Pool, std::uint64_t>, 32> parts;
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

template <class Pool>
void matmul(Pool& pool, matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    std::array<handle_t<Pool, void>, 3> parts;
    for (int q = 0; q < 3; ++q) {
      parts[static_cast<std::size_t>(q)] = pool.spawn([&pool, c, a, b, q, round] {
        matmul(pool, c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2));
      });
    }
    matmul(pool, c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1));
    for (auto& part : parts) part.join();
  }
}

template <class Pool>
std::unique_ptr<Pool> make(unsigned threads) {
  return std::make_unique<Pool>(threads);
}

// A fork-join problem run from main(): the root becomes a fiber, main blocks in its join.
template <class Pool, class Body>
prepare_fn fork_join(Body body) {
  return [body](const params& p) -> repetition {
    std::shared_ptr<Pool> pool = make<Pool>(p.threads);
    return [pool, body, n = p.n](rep_timer&, metrics&) { body(*pool, n); };
  };
}

// submit_future in the fibers' own spelling: spawn returns a handle; the shared workload calls
// get() on what the operation returns.
template <class Handle>
struct joined {
  Handle handle;
  auto get() { return handle.join(); }
};
struct spawn_op {
  template <class Pool, class F>
  auto operator()(Pool& pool, F&& f) const {
    return joined<decltype(pool.spawn(std::forward<F>(f)))>{pool.spawn(std::forward<F>(f))};
  }
};

// vector_fill: a root fiber spawns one fiber per block and joins them all.
struct spawn_blocks {
  template <class Pool, class F>
  void operator()(Pool& pool, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    run(pool, [&] {
      const pools::index_blocks<std::int64_t> split(first, last, blocks);
      std::vector<handle_t<Pool, void>> parts;
      parts.reserve(split.count());
      for (std::size_t k = 0; k < split.count(); ++k) {
        parts.push_back(pool.spawn([&f, range = split[k]] { f(range.first, range.second); }));
      }
      for (auto& part : parts) part.join();
    });
  }
};

// memory: n fibers suspended at once. Each repetition makes a fresh pool, so it maps (and
// measures) its stacks anew. `suspend_n(pool, n, arrived)` must leave n fibers suspended, each
// counting `arrived` down once it is about to suspend, and return a function that adds its own
// metrics, then lets them end and waits until they have.
template <class Pool, class SuspendN>
prepare_fn memory_workload(SuspendN suspend_n, std::size_t stack_size) {
  return [suspend_n, stack_size](const params& p) -> repetition {
    return [suspend_n, stack_size, n = p.n, threads = p.threads](rep_timer& timer, metrics& out) {
      auto pool = make<Pool>(threads);
      std::latch arrived(n);
      const auto before = current_rss_bytes();
      timer.start();
      auto release_and_wait = suspend_n(*pool, n, arrived);
      arrived.wait();  // every fiber is suspended (or about to), on its own stack
      timer.stop();
      const auto after = current_rss_bytes();
      release_and_wait(out);
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
      out["stack_kib"] = static_cast<double>(stack_size) / 1024.0;
    };
  };
}

// The tuned pool: n posted fibers, each in recv() on one unbuffered channel.
struct suspend_in_recv {
  auto operator()(thread_pool& pool, std::int64_t n, std::latch& arrived) const {
    struct state {
      pools::fibers::channel<int> release;
      pools::fibers::latch finished;
      std::atomic<std::int64_t> closed_seen{0};
      explicit state(std::int64_t n) : finished(n) {}
    };
    auto s = std::make_shared<state>(n);
    for (std::int64_t i = 0; i < n; ++i) {
      pool.post([s, &arrived] {
        arrived.count_down();
        if (!s->release.recv()) s->closed_seen.fetch_add(1, std::memory_order_relaxed);
        s->finished.count_down();
      });
    }
    return [s, n, &pool](metrics& out) {
      out["fibers_created"] = static_cast<double>(pool.stats().fibers_created);
      s->release.close();
      s->finished.wait();
      if (s->closed_seen.load() != n) {
        fail_verification(fmt::format("memory: {} of {} fibers saw the close", s->closed_seen.load(), n));
      }
    };
  }
};

// The textbook pool suspends fibers only in join() and yield(): a chain of n fibers, each
// spawning the next and suspending in its join(); the last one yields until released (it is the
// only one in the run queue).
struct suspend_in_join {
  static void link(textbook_pool& pool, std::int64_t left, std::latch& arrived,
                   const std::atomic<bool>& released) {
    arrived.count_down();
    if (left == 1) {
      while (!released.load(std::memory_order_acquire)) textbook_pool::yield();
      return;
    }
    pool.spawn([&pool, left, &arrived, &released] { link(pool, left - 1, arrived, released); }).join();
  }
  auto operator()(textbook_pool& pool, std::int64_t n, std::latch& arrived) const {
    auto released = std::make_shared<std::atomic<bool>>(false);
    auto chain = std::make_shared<textbook_pool::handle<void>>(
        pool.spawn([&pool, n, &arrived, released] { link(pool, n, arrived, *released); }));
    return [released, chain](metrics&) {
      released->store(true, std::memory_order_release);
      chain->join();
    };
  }
};

template <class Pool>
void add_workloads(suite& s) {
  s.add("fib", fork_join<Pool>([](Pool& pool, std::int64_t n) {
          const int k = static_cast<int>(n);
          check_fib(k, run(pool, [&pool, k] { return fib(pool, k); }));
        }));
  s.add("skynet", fork_join<Pool>([](Pool& pool, std::int64_t n) {
          const auto leaves = static_cast<std::uint64_t>(n);
          check_skynet(leaves, run(pool, [&pool, leaves] { return skynet(pool, 0, leaves); }));
        }));
  s.add("nqueens", fork_join<Pool>([](Pool& pool, std::int64_t n) {
          const int k = static_cast<int>(n);
          check_nqueens(k, run(pool, [&pool, k] { return nqueens(pool, k, queens_board{}); }));
        }));
  s.add("matmul", [](const params& p) -> repetition {
    std::shared_ptr<Pool> pool = make<Pool>(p.threads);
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [pool, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      run(*pool, [&] { matmul(*pool, problem->c(), problem->a(), problem->b()); });
      timer.stop();
      problem->check();
    };
  });
  s.add("submit", submit_workload(make<Pool>));
  s.add("submit_future", submit_future_workload(make<Pool>, spawn_op{}));
  s.add("wakeup", wakeup_workload(make<Pool>));
  s.add("vector_fill", vector_fill_workload(make<Pool>, spawn_blocks{}));
}

}  // namespace

int main(int argc, char** argv) {
  const pool_choice choice = pool_from_environment("fibers");
  suite s(choice.variant);
  if (choice.textbook) {
    add_workloads<textbook_pool>(s);
    // The textbook pool's stack size: src/textbook_switch.cpp.
    s.add("memory", memory_workload<textbook_pool>(suspend_in_join{}, 256 * 1024));
  } else {
    add_workloads<thread_pool>(s);
    s.add("memory", memory_workload<thread_pool>(suspend_in_recv{}, pools::fibers::default_stack_size));
  }
  return s.main(argc, argv);
}
