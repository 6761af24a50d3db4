// SPDX-License-Identifier: MIT
// Allocation failure in a simulated run (pools/fibers/simulated.hpp), SQLite-style
// (pools/testing/fault_loop.hpp): a run of fiber code whose k-th allocation fails, for k = 1, 2,
// ... until one completes. Every allocation of the run is on this thread — the simulator's, the
// adapter's, the fibers' — so each of them fails once: a post, a timer, a wake, a new fiber's
// stack bookkeeping. The run ends with std::bad_alloc or with the right result; never with an
// abort, a wrong result or a leak (LeakSanitizer in the asan preset), and the pool tears down
// whatever fibers the failure left suspended.
#include <doctest/doctest.h>

#include <pools/fibers/channel.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/simulated.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/sim/scheduler.hpp>
#include <pools/testing/fault_loop.hpp>

#include <chrono>
#include <mutex>
#include <new>
#include <optional>

namespace pf = pools::fibers;
namespace pt = pools::testing;
using namespace std::chrono_literals;

TEST_CASE("simulated fibers: a run whose k-th allocation fails stops with std::bad_alloc") {
  int refused = 0;
  pt::check_allocation_failures("a simulated run", [&refused](std::uint64_t k) {
    pools::sim::scheduler engine(pools::sim::make_strategy("random"), 7);
    pf::channel<int> values;  // unbuffered: a send hands over, it allocates nothing
    pf::mutex lock;
    int total = 0;
    std::optional<int> result;
    {
      pf::simulated pool(engine);
      try {
        pt::fail_allocation armed(k, pt::alloc_scope::this_thread);
        result = pool.run([&] {
          // Posted, not spawned: a join_handle on this fiber's stack would leak its finished task
          // when a failure leaves this fiber suspended for good (simulated.hpp, AFTER A FAILED RUN:
          // what lives on such a stack is not destroyed). The close ends the loop instead of a join.
          pool.post([&] {
            for (int i = 1; i <= 3; ++i) values.send(i);
            values.close();
          });
          while (auto v = values.recv()) {
            std::lock_guard guard(lock);
            total += *v;
            pf::this_fiber::sleep_for(1ms);  // a timer: an allocation of the simulator
          }
          return total;
        });
      } catch (const std::bad_alloc&) {
        ++refused;
      }
    }
    if (result) CHECK(*result == 6);
  });
  CHECK(refused > 0);
}
