// SPDX-License-Identifier: MIT
// priority_task_queue on its own: priority order, FIFO among equals, take_all, admission. (The
// FIFO queue, pools::two_lock_queue, is tested in common/tests/two_lock_queue_test.cpp.)
#include <doctest/doctest.h>

#include <pools/futures/priority_task_queue.hpp>

#include <cstdint>
#include <vector>

using pools::task_function;

namespace {
const auto always = [] { return true; };
}  // namespace

TEST_CASE("priority_task_queue: priority order, FIFO among equals, take_all, admission") {
  namespace pf = pools::futures;
  pf::priority_task_queue q;
  std::vector<int> order;
  const int prio[] = {0, 5, -3, 5, 0, 127, -128, 5};
  for (int i = 0; i < 8; ++i) {
    q.push(pf::priority_t{static_cast<std::int8_t>(prio[i])}, [&order, i] { order.push_back(i); });
  }
  CHECK(q.size() == 8);
  task_function out;
  CHECK_FALSE(q.try_pop(out, [] { return false; }));
  for (int k = 0; k < 4; ++k) {
    REQUIRE(q.try_pop(out, always));
    out();
  }
  CHECK(order == std::vector<int>{5, 1, 3, 7});
  auto rest = q.take_all();
  CHECK(q.size() == 0);
  for (auto& t : rest) t();
  CHECK(order == std::vector<int>{5, 1, 3, 7, 0, 4, 2, 6});
}
