// SPDX-License-Identifier: MIT
// Thread start failure (pools/testing/fault_loop.hpp): every futures pool, constructed with its
// n-th thread start failing for n = 1, 2, ..., throws std::system_error after joining every
// thread it started, and constructs once no start fails.
#include <doctest/doctest.h>

#include <pools/futures/textbook_pool.hpp>
#include <pools/futures/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

namespace pf = pools::futures;

TEST_CASE_TEMPLATE("futures pools: a thread that cannot start", Pool, pf::textbook_pool, pf::thread_pool,
                   pf::priority_thread_pool) {
  pools::testing::check_thread_start_failures<Pool>(4);
}
