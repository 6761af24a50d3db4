// SPDX-License-Identifier: MIT
#include <doctest/doctest.h>

#include <pools/index_blocks.hpp>

#include <climits>
#include <cstdint>

TEST_CASE("index_blocks: remainder is spread over the first blocks, as BS::thread_pool does") {
  const pools::index_blocks<int> b(0, 10, 3);
  REQUIRE(b.count() == 3);
  CHECK(b[0] == std::pair{0, 4});
  CHECK(b[1] == std::pair{4, 7});
  CHECK(b[2] == std::pair{7, 10});
}

TEST_CASE("index_blocks: empty, reversed, and fewer indices than blocks") {
  CHECK(pools::index_blocks<int>(3, 3, 4).count() == 0);
  CHECK(pools::index_blocks<int>(9, 2, 4).count() == 0);
  CHECK(pools::index_blocks<int>(0, 2, 8).count() == 2);
  CHECK(pools::index_blocks<int>(0, 2, 0).count() == 1);  // 0 blocks means "one"
}

TEST_CASE("index_blocks: the whole range of a signed type, without overflow") {
  const pools::index_blocks<int> b(INT_MIN, INT_MAX, 2);
  CHECK(b.size() == 0xFFFFFFFFu);
  CHECK(b[0].first == INT_MIN);
  CHECK(b[0].second == b[1].first);
  CHECK(b[1].second == INT_MAX);
}

TEST_CASE("index_blocks: blocks tile the range exactly for unsigned and 64-bit types") {
  const pools::index_blocks<std::uint8_t> small(0, 255, 7);
  unsigned covered = 0;
  std::uint8_t expect = 0;
  for (std::size_t k = 0; k < small.count(); ++k) {
    CHECK(small[k].first == expect);
    covered += small[k].second - small[k].first;
    expect = small[k].second;
  }
  CHECK(covered == 255);
  const pools::index_blocks<std::int64_t> big(INT64_MIN, INT64_MIN + 11, 4);
  CHECK(big[3].second == INT64_MIN + 11);
}
