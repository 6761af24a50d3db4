// SPDX-License-Identifier: MIT
// Thread start failure (pools/testing/fault_loop.hpp): every reactor pool, constructed with its
// n-th thread start failing for n = 1, 2, ..., throws std::system_error after joining every
// thread it started, and constructs once no start fails.
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/fault_loop.hpp>

namespace pr = pools::reactor;

TEST_CASE_TEMPLATE("reactor pools: a thread that cannot start", Pool, pr::textbook_pool,
                   pr::per_thread_executor, pr::shared_executor) {
  pools::testing::check_thread_start_failures<Pool>(4);
}
