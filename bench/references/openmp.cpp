// SPDX-License-Identifier: MIT
// bench_openmp — OpenMP tasks (GCC's libgomp): `#pragma omp task` + `taskwait` inside one
// parallel region of T threads, started by a single producer. OpenMP has no executor object that
// an outside thread can post to, so the workloads that need one say so instead of faking it.
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>

#include <omp.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace {
using namespace pools::bench;

std::uint64_t fib(int n) {
  if (n < 2) return static_cast<std::uint64_t>(n);
  std::uint64_t a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  std::array<std::uint64_t, skynet_fanout> parts{};
  const std::uint64_t child = size / skynet_fanout;
  for (int i = 0; i + 1 < skynet_fanout; ++i) {
#pragma omp task shared(parts) firstprivate(i, first, child)
    parts[static_cast<std::size_t>(i)] = skynet(first + static_cast<std::uint64_t>(i) * child, child);
  }
  parts[skynet_fanout - 1] = skynet(first + (skynet_fanout - 1) * child, child);
#pragma omp taskwait
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

std::uint64_t nqueens(int n, queens_board board) {
  if (board.row == n) return 1;
  std::array<std::uint64_t, 32> parts{};
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) {
#pragma omp task shared(parts) firstprivate(c, n, board)
      parts[static_cast<std::size_t>(c)] = nqueens(n, board.with(c));
    }
  }
#pragma omp taskwait
  std::uint64_t sum = 0;
  for (auto v : parts) sum += v;
  return sum;
}

void matmul(matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    for (int q = 0; q < 3; ++q) {
#pragma omp task firstprivate(c, a, b, q, round)
      matmul(c.quadrant(q / 2, q % 2), a.quadrant(q / 2, round), b.quadrant(round, q % 2));
    }
    matmul(c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1));
#pragma omp taskwait
  }
}

// A free function, not a lambda: Clang 14 crashes generating a taskloop nested in lambdas, and
// warns (-Wsign-compare) on a signed loop variable it compares with its own unsigned trip count.
// `data` is a pointer because taskloop firstprivatises what it did not see declared shared, and a
// firstprivate reference would copy the whole vector of vectors.
void fill_taskloop(std::vector<double>* data, std::size_t n, std::int64_t num_tasks) {
#pragma omp taskloop num_tasks(num_tasks) firstprivate(data)
  for (std::size_t i = 0; i < n; ++i) fill_vector(data[i], i);
}

// Runs `body` on one thread of a team of `threads`; the others execute the tasks it creates.
template <class F>
void in_team(unsigned threads, F&& body) {
#pragma omp parallel num_threads(static_cast<int>(threads))
#pragma omp single
  body();
}

}  // namespace

int main(int argc, char** argv) {
  suite s("openmp");
  s.add("fib", [](const params& p) -> repetition {
    return [p](rep_timer&, metrics&) {
      std::uint64_t r = 0;
      in_team(p.threads, [&] { r = fib(static_cast<int>(p.n)); });
      check_fib(static_cast<int>(p.n), r);
    };
  });
  s.add("skynet", [](const params& p) -> repetition {
    return [p](rep_timer&, metrics&) {
      std::uint64_t r = 0;
      in_team(p.threads, [&] { r = skynet(0, static_cast<std::uint64_t>(p.n)); });
      check_skynet(static_cast<std::uint64_t>(p.n), r);
    };
  });
  s.add("nqueens", [](const params& p) -> repetition {
    return [p](rep_timer&, metrics&) {
      std::uint64_t r = 0;
      in_team(p.threads, [&] { r = nqueens(static_cast<int>(p.n), queens_board{}); });
      check_nqueens(static_cast<int>(p.n), r);
    };
  });
  s.add("matmul", [](const params& p) -> repetition {
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [p, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      in_team(p.threads, [&] { matmul(problem->c(), problem->a(), problem->b()); });
      timer.stop();
      problem->check();
    };
  });
  s.add("submit", [](const params& p) -> repetition {
    // The producer is the team's `single` thread, not an outside thread: OpenMP has no other.
    return [p](rep_timer& timer, metrics& m) {
      std::int64_t ran = 0;
      timer.start();
      in_team(p.threads, [&] {
        for (std::int64_t i = 0; i < p.n; ++i) {
#pragma omp task shared(ran)
          {
#pragma omp atomic
            ++ran;
          }
        }
#pragma omp taskwait
      });
      timer.stop();
      if (ran != p.n) fail_verification("submit: not every task ran");
      m["ns_per_task"] = static_cast<double>(timer.elapsed().count()) / static_cast<double>(p.n);
    };
  });
  s.add("vector_fill", [](const params& p) -> repetition {
    auto vectors = std::make_shared<std::vector<std::vector<double>>>(static_cast<std::size_t>(p.n));
    for (std::size_t i = 0; i < vectors->size(); ++i) fill_vector((*vectors)[i], i);
    const double expected = vector_fill_checksum(*vectors);
    return [p, vectors, expected](rep_timer& timer, metrics& m) {
      using clock = std::chrono::steady_clock;
      auto& vs = *vectors;
      auto clear = [&] {
        for (auto& v : vs) std::fill(v.begin(), v.end(), 0.0);
      };
      clear();
      const auto s0 = clock::now();
      for (std::int64_t i = 0; i < p.n; ++i)
        fill_vector(vs[static_cast<std::size_t>(i)], static_cast<std::size_t>(i));
      const double serial = std::chrono::duration<double, std::nano>(clock::now() - s0).count();
      m["serial_ns"] = serial;
      const unsigned t = p.threads;
      const std::int64_t tasks[] = {std::max(1u, t / 2), t, 2 * t, 4 * t};
      const char* names[] = {"speedup_tasks_T/2", "speedup_tasks_T", "speedup_tasks_2T", "speedup_tasks_4T"};
      for (int k = 0; k < 4; ++k) {
        clear();
        const auto t0 = clock::now();
        if (k == 1) timer.start();
        in_team(t, [&] { fill_taskloop(vs.data(), vs.size(), tasks[k]); });
        if (k == 1) timer.stop();
        const double took = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
        if (vector_fill_checksum(vs) != expected) fail_verification("vector_fill: checksum differs");
        m[names[k]] = serial / took;
      }
    };
  });
  s.unsupported("submit_future", "OpenMP tasks return no futures; taskwait is the only join");
  s.unsupported("wakeup", "no thread outside an OpenMP team can hand a task to it");
  s.unsupported("memory", "an OpenMP task cannot suspend except by blocking its thread at taskwait");
  return s.main(argc, argv);
}
