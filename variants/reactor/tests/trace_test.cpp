// SPDX-License-Identifier: MIT
// The trace (pools/trace.hpp) of the reactor's pools against what the test posted: 1000 tasks,
// 100 of which post one more, so 1100 tasks; the export must count each one posted once and run
// once, on the pool's named worker tracks. Built with -DPOOLS_TRACE=ON only (without it the
// pools record nothing and there is nothing to compare).
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/trace_summary.hpp>
#include <pools/trace.hpp>
#include <pools/trace_export.hpp>
#include <pools/wait_group.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#if POOLS_TRACE

namespace {

constexpr int posted = 1000;    // from the test's thread
constexpr int reposting = 100;  // of those, the ones that post one more task from a worker
constexpr int tasks = posted + reposting;

// Posts the 1100 tasks to `pool` and waits until every one has run. The pool is destroyed by the
// caller afterwards (its threads stop writing their rings).
template <class Pool>
void post_all(Pool& pool) {
  pools::wait_group ran(tasks);
  for (int i = 0; i < posted; ++i) {
    if (i % (posted / reposting) == 0) {
      pool.post([&pool, &ran] {
        pool.post([&ran] { ran.done(); });  // from a worker of the pool
        ran.done();
      });
    } else {
      pool.post([&ran] { ran.done(); });
    }
  }
  REQUIRE(ran.wait_for(std::chrono::seconds(60)));
}

pools::trace::summary export_trace(std::string_view what) {
  return pools::testing::export_trace_summary("reactor_" + std::string(what));
}

// Tasks run on tracks named "<pool_name> worker <i>" (POOLS_TRACE_WORKER). Older tracks of the same
// name (pools of earlier test cases) recorded nothing since mark(): they add 0.
std::uint64_t tasks_on_workers(const pools::trace::summary& s, std::string_view pool_name) {
  const std::string prefix = std::string(pool_name) + " worker ";
  std::uint64_t n = 0;
  for (const auto& t : s.tracks)
    if (t.name.starts_with(prefix)) n += t.tasks;
  return n;
}

}  // namespace

TEST_CASE("trace: reactor executor records each posted task once, run once") {
  for (const auto strategy : {pools::reactor::strategy::per_thread, pools::reactor::strategy::shared}) {
    CAPTURE(pools::reactor::to_string(strategy));
    pools::trace::mark();  // leave out the events of what ran before
    {
      pools::reactor::executor ex(2, strategy);
      post_all(ex);
    }  // stopped and joined: the rings are complete
    const auto s = export_trace(pools::reactor::to_string(strategy));
    REQUIRE(s.truncated_tracks == 0);
    // Only executor::post counts: request_stop()'s drain markers go to asio::post directly, and
    // are not the pool's tasks.
    CHECK(s.total.posts == tasks);
    CHECK(s.total.tasks == tasks);
    CHECK(tasks_on_workers(s, "reactor") == tasks);
    CHECK(s.total.steals == 0);  // io_context has no stealing
    CHECK(s.total.parks == 0);   // ... and no hook for its sleep (executor.cpp)
  }
}

TEST_CASE("trace: reactor textbook_pool records each posted task once, run once") {
  constexpr int loops = 2;
  pools::trace::mark();
  {
    pools::reactor::textbook_pool pool(loops);
    post_all(pool);
  }  // drained and joined
  const auto s = export_trace("textbook");
  REQUIRE(s.truncated_tracks == 0);
  // The destructor's stop request is a task of each loop too (it goes through the same queue, and
  // the hooks sit at that queue, not in post()): one more post and one more task per loop.
  CHECK(s.total.posts == tasks + loops);
  CHECK(s.total.tasks == tasks + loops);
  CHECK(tasks_on_workers(s, "reactor textbook") == tasks + loops);
  CHECK(s.total.steals == 0);  // one queue per loop, nobody takes from another's
  // A wake is an eventfd write into an empty queue, at most one per post.
  CHECK(s.total.wakes <= s.total.posts);
}

#endif
