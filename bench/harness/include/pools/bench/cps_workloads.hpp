// SPDX-License-Identifier: MIT
// pools/bench/cps_workloads.hpp — fork-join in continuation-passing style on any pools::Executor.
//
// A callback executor (asio::thread_pool, the reactor, a thread per task) cannot block a task
// until its children finish: that would hold a thread and, on a fixed pool, deadlock. Instead
// each fork allocates a join node that counts outstanding children; the child that brings the
// count to zero runs the node's continuation (combine the results, tell the parent). This is
// the callback style spelled out, so fib/skynet/nqueens/matmul mean the same work as in the
// suspending variants: one task per call, the parent runs one child itself.
#pragma once

#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/executor.hpp>
#include <pools/wait_group.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

namespace pools::bench::cps {

/// A fork point waiting for `pending` children.
struct join_node {
  explicit join_node(join_node* p, int children) : parent(p), pending(children) {}
  virtual ~join_node() = default;
  /// Runs when the last child arrived. Returns false if the node re-armed itself with new
  /// children (matmul's second round) and must not complete its parent yet.
  virtual bool complete() = 0;

  join_node* parent;
  std::atomic<int> pending;
};

/// A child is done. Walks up while this arrival completes nodes, freeing each completed node.
/// acq_rel: a child's release publishes its result slot; the last arrival's acquire sees all of
/// its siblings' slots before complete() reads them.
inline void arrive(join_node* node) {
  while (node->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    join_node* parent = node->parent;
    if (!node->complete()) return;
    if (parent == nullptr) return;  // the root belongs to the caller, who may already be gone
    delete node;
    node = parent;
  }
}

/// The caller's node: complete() wakes the thread waiting in wait().
struct root_node final : join_node {
  root_node() : join_node(nullptr, 1) {}
  bool complete() override {
    done.done();
    return true;
  }
  void wait() { done.wait(); }
  wait_group done{1};
};

// ---- fib --------------------------------------------------------------------------------
struct fib_node final : join_node {
  fib_node(join_node* p, std::uint64_t* o) : join_node(p, 2), out(o) {}
  bool complete() override {
    *out = a + b;
    return true;
  }
  std::uint64_t a = 0, b = 0;
  std::uint64_t* out;
};

template <Executor E>
void fib(E& ex, int n, std::uint64_t* out, join_node* parent) {
  if (n < 2) {
    *out = static_cast<std::uint64_t>(n);
    return arrive(parent);
  }
  auto* node = new fib_node(parent, out);
  ex.post([&ex, n, node] { fib(ex, n - 1, &node->a, node); });
  fib(ex, n - 2, &node->b, node);
}

template <Executor E>
std::uint64_t run_fib(E& ex, int n) {
  std::uint64_t result = 0;
  root_node root;
  ex.post([&] { fib(ex, n, &result, &root); });
  root.wait();
  return result;
}

// ---- skynet -------------------------------------------------------------------------------
struct sum_node final : join_node {
  sum_node(join_node* p, int children, std::uint64_t* o) : join_node(p, children), out(o) {}
  bool complete() override {
    std::uint64_t s = 0;
    for (auto v : parts) s += v;
    *out = s;
    return true;
  }
  std::array<std::uint64_t, 32> parts{};
  std::uint64_t* out;
};

template <Executor E>
void skynet(E& ex, std::uint64_t first, std::uint64_t size, std::uint64_t* out, join_node* parent) {
  if (size == 1) {
    *out = first;
    return arrive(parent);
  }
  auto* node = new sum_node(parent, skynet_fanout, out);
  const std::uint64_t child = size / skynet_fanout;
  for (int i = 0; i + 1 < skynet_fanout; ++i) {
    ex.post([&ex, node, i, first, child] {
      skynet(ex, first + static_cast<std::uint64_t>(i) * child, child,
             &node->parts[static_cast<std::size_t>(i)], node);
    });
  }
  const int last = skynet_fanout - 1;
  skynet(ex, first + static_cast<std::uint64_t>(last) * child, child, &node->parts[last], node);
}

template <Executor E>
std::uint64_t run_skynet(E& ex, std::uint64_t leaves) {
  std::uint64_t result = 0;
  root_node root;
  ex.post([&] { skynet(ex, 0, leaves, &result, &root); });
  root.wait();
  return result;
}

// ---- nqueens -----------------------------------------------------------------------------
template <Executor E>
void nqueens(E& ex, int n, queens_board board, std::uint64_t* out, join_node* parent) {
  if (board.row == n) {
    *out = 1;
    return arrive(parent);
  }
  int legal[32];
  int count = 0;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) legal[count++] = c;
  }
  if (count == 0) {
    *out = 0;
    return arrive(parent);
  }
  auto* node = new sum_node(parent, count, out);
  for (int k = 0; k + 1 < count; ++k) {
    ex.post([&ex, n, node, k, next = board.with(legal[k])] {
      nqueens(ex, n, next, &node->parts[static_cast<std::size_t>(k)], node);
    });
  }
  nqueens(ex, n, board.with(legal[count - 1]), &node->parts[static_cast<std::size_t>(count - 1)], node);
}

template <Executor E>
std::uint64_t run_nqueens(E& ex, int n) {
  std::uint64_t result = 0;
  root_node root;
  ex.post([&] { nqueens(ex, n, queens_board{}, &result, &root); });
  root.wait();
  return result;
}

// ---- matmul ------------------------------------------------------------------------------
template <Executor E>
void matmul(E& ex, matrix_view c, matrix_view a, matrix_view b, join_node* parent);

// Two rounds of four products into the four C quadrants; complete() of round 0 starts round 1.
template <Executor E>
struct matmul_node final : join_node {
  matmul_node(join_node* p, E& e, matrix_view c_, matrix_view a_, matrix_view b_)
      : join_node(p, 4), ex(e), c(c_), a(a_), b(b_) {}
  void launch() {
    for (int q = 0; q < 3; ++q) {
      ex.post([this, q] {
        matmul(ex, c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2), this);
      });
    }
    matmul(ex, c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1), this);
  }
  bool complete() override {
    if (round == 1) return true;
    round = 1;
    pending.store(4, std::memory_order_relaxed);  // published to the children by post()
    launch();
    return false;
  }
  E& ex;
  matrix_view c, a, b;
  int round = 0;
};

template <Executor E>
void matmul(E& ex, matrix_view c, matrix_view a, matrix_view b, join_node* parent) {
  if (c.n <= matmul_cutoff) {
    matmul_kernel(c, a, b);
    return arrive(parent);
  }
  (new matmul_node<E>(parent, ex, c, a, b))->launch();
}

template <Executor E>
void run_matmul(E& ex, matmul_problem& problem) {
  root_node root;
  ex.post([&] { matmul(ex, problem.c(), problem.a(), problem.b(), &root); });
  root.wait();
}

// ---- the four as bench workloads ------------------------------------------------------------
template <class Make>
prepare_fn fib_workload(Make make) {
  return [make](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, n = static_cast<int>(p.n)](rep_timer&, metrics&) { check_fib(n, run_fib(*ex, n)); };
  };
}

template <class Make>
prepare_fn skynet_workload(Make make) {
  return [make](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, n = static_cast<std::uint64_t>(p.n)](rep_timer&, metrics&) {
      check_skynet(n, run_skynet(*ex, n));
    };
  };
}

template <class Make>
prepare_fn nqueens_workload(Make make) {
  return [make](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, n = static_cast<int>(p.n)](rep_timer&, metrics&) { check_nqueens(n, run_nqueens(*ex, n)); };
  };
}

template <class Make>
prepare_fn matmul_workload(Make make) {
  return [make](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [ex, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      run_matmul(*ex, *problem);
      timer.stop();
      problem->check();
    };
  };
}

/// Registers every workload an executor with nothing but post() can run: the four fork-join
/// problems in continuation-passing style, and the executor workloads (submit, submit_future,
/// wakeup, vector_fill). `memory` is the caller's: what a suspended task is differs.
template <class Make>
void add_post_only_workloads(suite& s, Make make) {
  s.add("fib", fib_workload(make));
  s.add("skynet", skynet_workload(make));
  s.add("nqueens", nqueens_workload(make));
  s.add("matmul", matmul_workload(make));
  s.add("submit", submit_workload(make));
  s.add("submit_future", submit_future_workload(make));
  s.add("wakeup", wakeup_workload(make));
  s.add("vector_fill", vector_fill_workload(make));
}

}  // namespace pools::bench::cps
