// SPDX-License-Identifier: MIT
#include <pools/bench/problems.hpp>

#include <fmt/core.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

namespace pools::bench {

std::uint64_t fib_expected(int n) {
  std::uint64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

void check_fib(int n, std::uint64_t got) {
  const auto want = fib_expected(n);
  if (got != want) fail_verification(fmt::format("fib({}) = {}, expected {}", n, got, want));
}

std::uint64_t skynet_expected(std::uint64_t leaves) {
  return leaves * (leaves - 1) / 2;
}

void check_skynet(std::uint64_t leaves, std::uint64_t got) {
  const auto want = skynet_expected(leaves);
  if (got != want) fail_verification(fmt::format("skynet({}) = {}, expected {}", leaves, got, want));
}

bool queens_board::can_place(int c) const {
  for (int r = 0; r < row; ++r) {
    const int d = column[static_cast<std::size_t>(r)] - c;
    if (d == 0 || d == row - r || -d == row - r) return false;
  }
  return true;
}

queens_board queens_board::with(int c) const {
  queens_board next = *this;
  next.column[static_cast<std::size_t>(row)] = static_cast<std::int8_t>(c);
  ++next.row;
  return next;
}

std::uint64_t nqueens_expected(int n) {
  static constexpr std::array<std::uint64_t, 17> known{
      1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};
  return known.at(static_cast<std::size_t>(n));
}

void check_nqueens(int n, std::uint64_t got) {
  const auto want = nqueens_expected(n);
  if (got != want) fail_verification(fmt::format("nqueens({}) = {} solutions, expected {}", n, got, want));
}

// Aligned to a cache line, so its inner loop sits at the same offset in every executable that
// links the harness. Where the linker happened to place it, the same object code ran single-threaded
// matmul in 255 ms (the function at 16 bytes past a 64-byte boundary) or 400 ms (32 bytes past),
// with the same instruction count (callgrind): the subjects of a comparison were ranked by their
// unrelated code's size.
[[gnu::aligned(64)]] void matmul_kernel(matrix_view c, matrix_view a, matrix_view b) {
  // i-k-j order: the inner loop streams rows of B and C, which the compiler vectorises.
  for (std::size_t i = 0; i < c.n; ++i) {
    double* ci = c.data + i * c.stride;
    const double* ai = a.data + i * a.stride;
    for (std::size_t k = 0; k < a.n; ++k) {
      const double aik = ai[k];
      const double* bk = b.data + k * b.stride;
      for (std::size_t j = 0; j < c.n; ++j) ci[j] += aik * bk[j];
    }
  }
}

void matmul_serial(matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) return matmul_kernel(c, a, b);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) matmul_serial(c.quadrant(i, j), a.quadrant(i, round), b.quadrant(round, j));
    }
  }
}

namespace {
constexpr std::size_t huge_page = std::size_t{2} << 20;

// 2 MiB-aligned and, where the kernel allows, backed by transparent huge pages (problems.hpp).
double* allocate_matrices(std::size_t doubles) {
  const std::size_t bytes = (doubles * sizeof(double) + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, bytes);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the run is merely noisier
#endif
  std::memset(p, 0, bytes);
  return static_cast<double*>(p);
}
}  // namespace

void matmul_problem::free_storage::operator()(double* p) const noexcept {
  std::free(p);
}

matmul_problem::matmul_problem(std::size_t n)
    : n_(n), storage_(allocate_matrices(3 * n * n)), a_(storage_.get()), b_(a_ + n * n), c_(b_ + n * n) {
  std::mt19937_64 gen(12345);
  std::uniform_int_distribution<int> small(-2, 2);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) a_[i * n_ + j] = small(gen);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) b_[i * n_ + j] = small(gen);
  }
}

void matmul_problem::reset() {
  std::fill(c_, c_ + n_ * n_, 0.0);
}

void matmul_problem::check() const {
  std::mt19937_64 gen(777);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<double> x(n_), bx(n_, 0.0), abx(n_, 0.0), cx(n_, 0.0);
  for (int trial = 0; trial < 2; ++trial) {
    for (auto& v : x) v = small(gen);
    for (std::size_t i = 0; i < n_; ++i) {
      double s = 0;
      for (std::size_t j = 0; j < n_; ++j) s += b_[i * n_ + j] * x[j];
      bx[i] = s;
    }
    for (std::size_t i = 0; i < n_; ++i) {
      double s = 0, t = 0;
      for (std::size_t j = 0; j < n_; ++j) {
        s += a_[i * n_ + j] * bx[j];
        t += c_[i * n_ + j] * x[j];
      }
      abx[i] = s;
      cx[i] = t;
    }
    for (std::size_t i = 0; i < n_; ++i) {
      if (abx[i] != cx[i]) {
        fail_verification(
            fmt::format("matmul({}): row {} of C is wrong (A·B·x = {}, C·x = {})", n_, i, abx[i], cx[i]));
      }
    }
  }
}

void fill_vector(std::vector<double>& v, std::size_t index) {
  std::mt19937_64 gen(index * 7919 + 1);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  v.resize(vector_fill_length);
  for (auto& x : v) x = dist(gen);
}

double vector_fill_checksum(const std::vector<std::vector<double>>& vectors) {
  double sum = 0;
  for (const auto& v : vectors) {
    for (double x : v) sum += x;
  }
  return sum;
}

}  // namespace pools::bench
