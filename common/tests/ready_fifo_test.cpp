// SPDX-License-Identifier: MIT
// ready_fifo: oldest first, across refills, and the drained queue reuses its storage.
#include <doctest/doctest.h>

#include <pools/ready_fifo.hpp>

TEST_CASE("ready_fifo: pops in push order, also when pushes and pops interleave") {
  pools::ready_fifo<int> q;
  int v = -1;
  CHECK(q.empty());
  CHECK_FALSE(q.pop(v));
  for (int i = 0; i < 5; ++i) q.push(i);
  CHECK(q.size() == 5);
  CHECK(q.pop(v));
  CHECK(v == 0);
  CHECK(q.pop(v));
  CHECK(v == 1);
  q.push(5);  // behind the three still queued
  for (int expected = 2; expected <= 5; ++expected) {
    REQUIRE(q.pop(v));
    CHECK(v == expected);
  }
  CHECK(q.empty());
  CHECK_FALSE(q.pop(v));
  CHECK(v == 5);  // a failed pop leaves `out` alone
}

TEST_CASE("ready_fifo: many rounds of fill and drain keep the order") {
  pools::ready_fifo<int> q;
  int next_in = 0, next_out = 0;
  for (int round = 1; round <= 100; ++round) {
    for (int i = 0; i < round; ++i) q.push(next_in++);
    for (int i = 0; i < round / 2 + 1; ++i) {
      int v = -1;
      if (!q.pop(v)) break;
      CHECK(v == next_out++);
    }
  }
  int v = -1;
  while (q.pop(v)) CHECK(v == next_out++);
  CHECK(next_out == next_in);
}
