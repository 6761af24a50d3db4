// SPDX-License-Identifier: MIT
// Thread start failure (pools/testing/fault_loop.hpp): both coroutine pools, constructed with
// their n-th thread start failing for n = 1, 2, ..., throw std::system_error after joining every
// thread they started, and construct once no start fails.
#include <doctest/doctest.h>

#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

namespace pc = pools::coroutines;

TEST_CASE_TEMPLATE("coroutines pools: a thread that cannot start", Pool, pc::textbook_pool, pc::thread_pool) {
  pools::testing::check_thread_start_failures<Pool>(4);
}
