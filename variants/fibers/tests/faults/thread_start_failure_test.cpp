// SPDX-License-Identifier: MIT
// Thread start failure (pools/testing/fault_loop.hpp): the tuned fiber pool, constructed with its
// n-th thread start failing for n = 1, 2, ..., throws std::system_error after joining every
// thread it started, and constructs once no start fails. The textbook pool is not tested here:
// its constructor does not stop the threads it started when a later one fails, so the
// exception's destruction of its std::jthreads waits forever (docs/reliability.md, "Pools: out
// of memory, out of threads"; the fix costs lines its 150-line budget does not have yet).
#include <doctest/doctest.h>

#include <pools/fibers/thread_pool.hpp>
#include <pools/testing/fault_loop.hpp>

namespace pfb = pools::fibers;

TEST_CASE("fibers thread_pool: a thread that cannot start") {
  pools::testing::check_thread_start_failures<pfb::thread_pool>(4);
}
