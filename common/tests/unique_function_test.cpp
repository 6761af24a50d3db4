// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <pools/unique_function.hpp>

#include <array>
#include <functional>
#include <memory>
#include <string>

namespace {
// Counts live instances so tests can see every constructed target destroyed exactly once.
struct tracked {
  static inline int live = 0;
  std::array<char, 64> payload{};  // too big for the small buffer: heap path
  tracked() { ++live; }
  tracked(tracked&&) noexcept { ++live; }
  ~tracked() { --live; }
  int operator()() const { return 7; }
};
struct small_tracked {
  static inline int live = 0;
  small_tracked() { ++live; }
  small_tracked(small_tracked&&) noexcept { ++live; }
  ~small_tracked() { --live; }
  int operator()() const { return 3; }
};
}  // namespace

TEST_CASE("unique_function: empty, call, and bad_function_call") {
  pools::unique_function<int()> f;
  CHECK_FALSE(f);
  CHECK_THROWS_AS(f(), std::bad_function_call);
  f = [] { return 5; };
  CHECK(f);
  CHECK(f() == 5);
  f = nullptr;
  CHECK_FALSE(f);
}

TEST_CASE("unique_function: holds move-only targets and forwards arguments") {
  auto p = std::make_unique<int>(40);
  pools::unique_function<int(int, std::unique_ptr<int>)> f =
      [p = std::move(p)](int a, std::unique_ptr<int> b) { return *p + a + *b; };
  CHECK(f(1, std::make_unique<int>(1)) == 42);
}

TEST_CASE("unique_function: small targets stay inline, big ones on the heap, both destroyed once") {
  static_assert(sizeof(small_tracked) <= pools::unique_function<int()>::small_buffer_size);
  SUBCASE("small") {
    {
      pools::unique_function<int()> a = small_tracked{};
      CHECK(small_tracked::live == 1);
      pools::unique_function<int()> b = std::move(a);
      CHECK(small_tracked::live == 1);
      CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from state is specified
      CHECK(b() == 3);
      a = std::move(b);
      CHECK(a() == 3);
    }
    CHECK(small_tracked::live == 0);
  }
  SUBCASE("big") {
    {
      pools::unique_function<int()> a = tracked{};
      pools::unique_function<int()> b = std::move(a);
      CHECK(tracked::live == 1);
      CHECK(b() == 7);
      b = [] { return 1; };  // assigning destroys the old target
      CHECK(tracked::live == 0);
    }
    CHECK(tracked::live == 0);
  }
}

TEST_CASE("unique_function: swap and self-move") {
  pools::unique_function<std::string()> a = [] { return std::string("a"); };
  pools::unique_function<std::string()> b = [s = std::string(100, 'b')] { return s; };
  a.swap(b);
  CHECK(a().size() == 100);
  CHECK(b() == "a");
  auto& alias = a;
  a = std::move(alias);
  CHECK(a().size() == 100);
}
