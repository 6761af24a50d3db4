// SPDX-License-Identifier: MIT
// stack_pool: sizes, reuse, guard pages (read back from /proc/self/maps), deep recursion.
#include <doctest/doctest.h>

#include <pools/fibers/latch.hpp>
#include <pools/fibers/stack_pool.hpp>
#include <pools/fibers/thread_pool.hpp>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace {
// The permissions of the mapping that contains `address`, from /proc/self/maps ("rw-p", "---p").
std::string protection_at(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms;
    in >> range >> perms;
    const auto dash = range.find('-');
    const auto lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a >= lo && a < hi) return perms;
  }
  return "unmapped";
}

int recurse(int depth) {
  volatile char frame[256];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return recurse(depth - 1) + frame[0];
}

int recurse_expected(int depth) {
  int sum = 0;
  for (int d = 0; d <= depth; ++d) sum += static_cast<char>(d);
  return sum;
}
}  // namespace

TEST_CASE("stack_pool: sizes are validated and rounded to whole pages") {
  CHECK_THROWS_AS(pools::fibers::stack_pool({.size = 4096}), std::invalid_argument);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  pools::fibers::stack_pool pool({.size = 20000, .guard_page = false});
  CHECK(pool.stack_size() % page == 0);
  CHECK(pool.stack_size() >= 20000);
  const auto s = pool.allocate();
  CHECK(s.size == pool.stack_size());
  CHECK_FALSE(s.guarded);
  s.base[0] = std::byte{1};  // the whole range is writable
  s.base[s.size - 1] = std::byte{1};
  pool.deallocate(s);
}

TEST_CASE("stack_pool: released stacks are reused, slabs are shared") {
  pools::fibers::stack_pool pool;
  const auto a = pool.allocate();
  const auto b = pool.allocate();
  CHECK(a.base != b.base);
  CHECK(pool.stats().in_use == 2);
  CHECK(pool.stats().mapped == 16);  // one slab
  pool.deallocate(a);
  const auto c = pool.allocate();
  CHECK(c.base == a.base);  // the warm one comes back first
  pool.deallocate(b);
  pool.deallocate(c);
  CHECK(pool.stats().in_use == 0);
}

TEST_CASE("stack_pool: a guarded stack has an inaccessible page right below it") {
  if (pools::fibers::stack_pool::guard_budget_left() < 16) {
    MESSAGE("guard budget exhausted by earlier tests; nothing to check");
    return;
  }
  const auto before = pools::fibers::stack_pool::guard_budget_left();
  {
    pools::fibers::stack_pool pool({.size = 64 * 1024, .guard_page = true});
    const auto s = pool.allocate();
    REQUIRE(s.guarded);
    CHECK(protection_at(s.base - 1).substr(0, 3) == "---");
    CHECK(protection_at(s.base).substr(0, 2) == "rw");
    CHECK(pools::fibers::stack_pool::guard_budget_left() == before - 16);
    CHECK(pool.stats().guarded == 16);
    pool.deallocate(s);
  }
  CHECK(pools::fibers::stack_pool::guard_budget_left() == before);  // returned with the slabs
  pools::fibers::stack_pool unguarded({.size = 64 * 1024, .guard_page = false});
  const auto u = unguarded.allocate();
  CHECK_FALSE(u.guarded);
  CHECK(unguarded.stats().guarded == 0);
  unguarded.deallocate(u);
}

TEST_CASE("stack_pool: a fiber can recurse deeply on the default stack, and on a configured one") {
  pools::fibers::thread_pool pool(1);
  // ~300 frames of ~300 bytes: ~90 KiB, well inside 256 KiB (also with sanitizer-grown frames).
  CHECK(pool.run([] { return recurse(300); }) == recurse_expected(300));

  pools::fibers::pool_options big;
  big.threads = 1;
  big.stack.size = 4 * 1024 * 1024;
  pools::fibers::thread_pool deep(big);
  CHECK(deep.run([] { return recurse(5000); }) == recurse_expected(5000));  // ~1.5 MiB deep
  CHECK(deep.stats().stacks.mapped >= 1);
}
