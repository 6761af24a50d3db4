// Behaviour of the two reference executors beyond the shared conformance suite.
#include <doctest/doctest.h>

#include <pools/inline_executor.hpp>
#include <pools/thread_per_task_executor.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

TEST_CASE("inline_executor: runs on the caller, nested posts run after the posting task") {
  pools::inline_executor ex;
  std::vector<int> order;
  const auto caller = std::this_thread::get_id();
  bool same_thread = false;
  ex.post([&] {
    same_thread = std::this_thread::get_id() == caller;
    order.push_back(1);
    ex.post([&] { order.push_back(3); });
    order.push_back(2);
  });
  CHECK(same_thread);
  CHECK(order == std::vector<int>{1, 2, 3});  // all done when the outer post returns
}

TEST_CASE("thread_per_task_executor: a fresh thread per task, never more than the cap at once") {
  constexpr std::size_t cap = 3;
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> running{0}, peak{0};
  {
    pools::thread_per_task_executor ex(cap);
    CHECK(ex.concurrency() == cap);
    for (int i = 0; i < 60; ++i) {
      ex.post([&] {
        const int now = ++running;
        int seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        {
          std::lock_guard lock(m);
          ids.insert(std::this_thread::get_id());
        }
        --running;
      });
    }
  }  // drains
  CHECK(peak.load() <= static_cast<int>(cap));
  CHECK(peak.load() >= 1);
  // Ids of exited threads may be reused by the OS, so only "more than cap" is guaranteed.
  CHECK(ids.size() > cap);
}
