// SPDX-License-Identifier: MIT
// bench_boost_fiber — Boost.Fiber (1.74), the reference for stackful fibers.
//
// T threads form one Boost.Fiber work-stealing group: the harness's main thread plus T-1 helpers,
// each installing algo::work_stealing(T, suspend=true) (idle threads sleep instead of spinning).
// Fork-join is spelled the Boost.Fiber way: a boost::fibers::fiber per call, joined. Every fiber
// gets its own stack from Boost's default allocator (fixedsize_stack, 128 KiB, malloc'd) and is
// queued (launch::post) before the parent goes on; join() suspends the parent. This is the cost
// the fibers variant avoids by running a child on its parent's stack until something blocks.
//
// Boost.Fiber can only start fibers from threads of its group, so the workloads that post from an
// outside thread (submit, wakeup) are not expressible; submit_future is spelled with
// boost::fibers::async from the main thread, which is a member of the group.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/index_blocks.hpp>

#include <boost/context/stack_traits.hpp>
#include <boost/fiber/all.hpp>
#include <fmt/core.h>

#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace {
using namespace pools::bench;
namespace bf = boost::fibers;

// The scheduling group. Boost.Fiber's work_stealing keeps its schedulers in a static table sized
// on first use, so there is one group per process — fine, as each bench run measures one
// workload. The helpers park their main fiber on a fiber condition variable; their schedulers
// keep stealing and running fibers until the group is torn down.
class fiber_group {
 public:
  explicit fiber_group(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i) {
      helpers_.emplace_back([this, threads] {
        bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, true);
        std::unique_lock<bf::mutex> lock(mutex_);
        done_cv_.wait(lock, [this] { return done_; });
      });
    }
    bf::use_scheduling_algorithm<bf::algo::work_stealing>(threads, true);  // blocks until all joined
  }
  ~fiber_group() {
    {
      std::unique_lock<bf::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    for (auto& t : helpers_) t.join();
  }
  fiber_group(const fiber_group&) = delete;
  fiber_group& operator=(const fiber_group&) = delete;

 private:
  std::vector<std::thread> helpers_;
  bf::mutex mutex_;
  bf::condition_variable done_cv_;
  bool done_ = false;
};

std::uint64_t fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0;
  bf::fiber child([&a, n] { a = fib(n - 1); });
  const std::uint64_t b = fib(n - 2);
  child.join();
  return a + b;
}

std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  const std::uint64_t child = size / skynet_fanout;
  std::array<std::uint64_t, skynet_fanout> parts{};
  std::array<bf::fiber, skynet_fanout - 1> children;
  for (std::uint64_t i = 0; i + 1 < skynet_fanout; ++i) {
    children[i] =
        bf::fiber([&parts, i, start = first + i * child, child] { parts[i] = skynet(start, child); });
  }
  parts[skynet_fanout - 1] = skynet(first + (skynet_fanout - 1) * child, child);
  for (auto& c : children) c.join();
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

std::uint64_t nqueens(int n, const queens_board& board) {
  if (board.row == n) return 1;
  std::array<std::uint64_t, 32> parts{};
  std::array<bf::fiber, 32> children;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) {
      children[static_cast<std::size_t>(c)] = bf::fiber(
          [&parts, &board, n, c] { parts[static_cast<std::size_t>(c)] = nqueens(n, board.with(c)); });
    }
  }
  for (auto& c : children) {
    if (c.joinable()) c.join();
  }
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

void matmul(matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    std::array<bf::fiber, 3> children;
    for (int q = 0; q < 3; ++q) {
      children[static_cast<std::size_t>(q)] = bf::fiber(
          [=] { matmul(c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2)); });
    }
    matmul(c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1));
    for (auto& child : children) child.join();
  }
}

template <class Body>
prepare_fn in_group(Body body) {
  return [body](const params& p) -> repetition {
    auto group = std::make_shared<fiber_group>(p.threads);
    return [group, body, n = p.n](rep_timer&, metrics&) { body(n); };
  };
}

struct async_op {  // submit_future: one boost::fibers::async per submission
  template <class F>
  auto operator()(fiber_group&, F&& f) const {
    return bf::async(std::forward<F>(f));
  }
};

struct fiber_blocks {  // vector_fill: one fiber per block, joined
  template <class F>
  void operator()(fiber_group&, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    const pools::index_blocks<std::int64_t> split(first, last, blocks);
    std::vector<bf::fiber> children;
    children.reserve(split.count());
    for (std::size_t k = 0; k < split.count(); ++k) {
      children.emplace_back([&f, range = split[k]] { f(range.first, range.second); });
    }
    for (auto& c : children) c.join();
  }
};

auto make_group = [](unsigned threads) { return std::make_unique<fiber_group>(threads); };

}  // namespace

int main(int argc, char** argv) {
  suite s("boost_fiber");
  s.add("fib", in_group([](std::int64_t n) { check_fib(static_cast<int>(n), fib(static_cast<int>(n))); }));
  s.add("skynet", in_group([](std::int64_t n) {
          check_skynet(static_cast<std::uint64_t>(n), skynet(0, static_cast<std::uint64_t>(n)));
        }));
  s.add("nqueens", in_group([](std::int64_t n) {
          check_nqueens(static_cast<int>(n), nqueens(static_cast<int>(n), queens_board{}));
        }));
  s.add("matmul", [](const params& p) -> repetition {
    auto group = std::make_shared<fiber_group>(p.threads);
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [group, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      matmul(problem->c(), problem->a(), problem->b());
      timer.stop();
      problem->check();
    };
  });
  s.add("submit_future", submit_future_workload(make_group, async_op{}));
  s.add("vector_fill", vector_fill_workload(make_group, fiber_blocks{}));
  s.add("memory", [](const params& p) -> repetition {
    auto group = std::make_shared<fiber_group>(p.threads);
    return [group, n = p.n](rep_timer& timer, metrics& out) {
      bf::unbuffered_channel<int> release;
      std::atomic<std::int64_t> closed_seen{0}, arrived{0};
      std::vector<bf::fiber> fibers;
      fibers.reserve(static_cast<std::size_t>(n));
      const auto before = current_rss_bytes();
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) {
        fibers.emplace_back([&] {
          int v = 0;
          arrived.fetch_add(1, std::memory_order_relaxed);
          if (release.pop(v) == bf::channel_op_status::closed)
            closed_seen.fetch_add(1, std::memory_order_relaxed);
        });
      }
      // launch::post queued them all; let every one run up to its pop() before measuring.
      while (arrived.load(std::memory_order_relaxed) != n) boost::this_fiber::yield();
      timer.stop();
      const auto after = current_rss_bytes();
      release.close();
      for (auto& f : fibers) f.join();
      if (closed_seen.load() != n) {
        fail_verification(fmt::format("memory: {} of {} fibers saw the close", closed_seen.load(), n));
      }
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
      out["stack_kib"] = static_cast<double>(boost::context::stack_traits::default_size()) / 1024.0;
    };
  });
  s.unsupported(
      "submit",
      "Boost.Fiber starts fibers only from threads of its scheduling group; there is no thread-safe way "
      "for an outside thread to post one");
  s.unsupported("wakeup", "same as submit: no post from an outside thread into a Boost.Fiber scheduler");
  return s.main(argc, argv);
}
