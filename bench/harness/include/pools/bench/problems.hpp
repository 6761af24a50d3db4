// SPDX-License-Identifier: MIT
// pools/bench/problems.hpp — the fork-join problems every subject solves, and how to check them.
//
// Only the *parallel structure* of fib, skynet, nqueens and matmul differs between variants;
// the problem itself — inputs, serial base cases, expected answers — is defined once here so
// that every bench_<name> computes exactly the same thing and is checked the same way.
#pragma once

#include <pools/bench/harness.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pools::bench {

// ---- fib: one task per call, no cutoff ----------------------------------------------------
/// fib(n) computed iteratively: the expected answer.
std::uint64_t fib_expected(int n);
/// Calls fail_verification() unless got == fib(n).
void check_fib(int n, std::uint64_t got);

// ---- skynet: a tree with fan-out 10; leaf i contributes i ---------------------------------
// A node covers the leaves [first, first + size); size is a power of 10. A node with size 1 is
// a leaf and returns `first`; otherwise it spawns 10 children of size/10 and sums them.
inline constexpr int skynet_fanout = 10;
std::uint64_t skynet_expected(std::uint64_t leaves);
void check_skynet(std::uint64_t leaves, std::uint64_t got);

// ---- nqueens: one task per legal placement -----------------------------------------------
// A board holds the column of the queen in each of the first `row` rows. The task for a board
// tries every column in the next row; each legal placement becomes a child task with a copy of
// the board. A board with row == n counts as one solution.
struct queens_board {
  std::array<std::int8_t, 32> column{};
  int row = 0;
  /// Whether a queen may go in column c of the next row (no shared column or diagonal).
  bool can_place(int c) const;
  queens_board with(int c) const;
};
inline constexpr int nqueens_max_n = 16;  // the CLI accepts n = 1 .. nqueens_max_n
std::uint64_t nqueens_expected(int n);    // known counts for n = 1 .. 16
void check_nqueens(int n, std::uint64_t got);

// ---- matmul: divide and conquer C += A·B on square power-of-two matrices --------------------
// Split every matrix into quadrants; C11 += A11·B11, C12 += A11·B12, C21 += A21·B11,
// C22 += A21·B12 run in parallel, *then* the four products with A?2·B2? run in parallel (the two
// rounds write the same C quadrants, so they must not overlap). Blocks of matmul_cutoff or less
// are multiplied serially by matmul_kernel.
inline constexpr std::size_t matmul_cutoff = 64;

/// A square view into a row-major matrix with a row stride.
struct matrix_view {
  double* data;
  std::size_t n;
  std::size_t stride;
  /// Quadrant (i, j) of size n/2, i and j in {0, 1}.
  matrix_view quadrant(int i, int j) const {
    const std::size_t h = n / 2;
    return {data + static_cast<std::size_t>(i) * h * stride + static_cast<std::size_t>(j) * h, h, stride};
  }
};

/// Serial base case: C += A·B for n <= matmul_cutoff.
void matmul_kernel(matrix_view c, matrix_view a, matrix_view b);

/// Inputs of one matmul run: A and B hold small integers, so every sum is exact in double and
/// the check can demand equality.
class matmul_problem {
 public:
  explicit matmul_problem(std::size_t n);
  matmul_problem(const matmul_problem&) = delete;  // the views point into storage_
  matmul_problem& operator=(const matmul_problem&) = delete;
  matrix_view a() { return {a_, n_, n_}; }
  matrix_view b() { return {b_, n_, n_}; }
  matrix_view c() { return {c_, n_, n_}; }
  std::size_t n() const { return n_; }
  /// Zeroes C (call before each repetition, outside the timed part).
  void reset();
  /// Freivalds' check, O(n^2): A·(B·x) == C·x for random x; fail_verification() otherwise.
  void check() const;

 private:
  std::size_t n_;
  // The three matrices live in one 2 MiB-aligned block, advised for transparent huge pages. With
  // 4 KiB pages from malloc, the power-of-two row stride (8 KiB at n = 1024) puts a kernel
  // block's 64 rows into L2 sets chosen by whichever physical pages the process happened to get:
  // the same binary's single-threaded matmul took 190 ms in one process and 470 ms in the next,
  // so subjects were ranked by luck. Huge pages make the mapping the same for every process
  // (measured: 187–202 ms across subjects and runs). Without THP the advice is ignored.
  struct free_storage {
    void operator()(double* p) const noexcept;
  };
  std::unique_ptr<double[], free_storage> storage_;  // A, B, C, one after the other
  double* a_;
  double* b_;
  double* c_;
};

/// Reference serial divide and conquer (same recursion as the parallel versions, no tasks).
void matmul_serial(matrix_view c, matrix_view a, matrix_view b);

// ---- vector_fill: the BS::thread_pool paper's test ----------------------------------------
// Fill `vectors` vectors of vector_fill_length doubles each from a per-vector seeded generator.
inline constexpr std::size_t vector_fill_length = 4096;
void fill_vector(std::vector<double>& v, std::size_t index);
/// Checksum of all vectors, compared with the single-threaded fill's.
double vector_fill_checksum(const std::vector<std::vector<double>>& vectors);

}  // namespace pools::bench
