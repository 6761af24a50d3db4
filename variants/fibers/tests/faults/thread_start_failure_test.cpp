// SPDX-License-Identifier: MIT
// Thread start failure (pools/testing/fault_loop.hpp): both fiber pools, constructed with their
// n-th thread start failing for n = 1, 2, ..., throw std::system_error after joining every
// thread they started, and construct once no start fails.
#include <doctest/doctest.h>

#include <pools/fibers/textbook_pool.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

namespace pfb = pools::fibers;

TEST_CASE_TEMPLATE("fibers pools: a thread that cannot start", Pool, pfb::textbook_pool, pfb::thread_pool) {
  pools::testing::check_thread_start_failures<Pool>(4);
}
