// SPDX-License-Identifier: MIT
// Behaviour of the two reference executors beyond the shared conformance suite.
#include <doctest/doctest.h>

#include <pools/inline_executor.hpp>
#include <pools/thread_per_task_executor.hpp>
#include <pools/wait_group.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
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

// Exited threads must be joined promptly. The earlier design had each finishing thread join the
// one that finished before it, so under a steady stream of short tasks the joins formed a chain of
// live threads (each waiting for its predecessor to exit), which grew to ~28,000 threads and then
// pthread_create failed (EAGAIN, out of memory mappings) at a million tasks. Counting the
// process's OS threads catches that: the bound holds at any task count.
TEST_CASE("thread_per_task_executor: threads that finished do not pile up under a stream of tasks") {
  constexpr std::size_t cap = 2;
  // A tenth in slow builds (POOLS_SANITIZED=1: sanitizers, and qemu, where a thread start is slow).
  const char* slow = std::getenv("POOLS_SANITIZED");
  const int tasks = slow != nullptr && std::string(slow) == "1" ? 2'000 : 20'000;
  const auto os_threads = [] {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
    return -1;
  };
  const int baseline = os_threads();
  REQUIRE(baseline > 0);
  std::atomic<bool> done{false};
  std::atomic<int> peak{0};
  std::thread sampler([&] {
    while (!done.load()) {
      peak.store(std::max(peak.load(), os_threads()));
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  std::atomic<int> ran{0};
  {
    pools::thread_per_task_executor ex(cap);
    for (int i = 0; i < tasks; ++i) ex.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
  }
  done = true;
  sampler.join();
  CHECK(ran.load() == tasks);
  // Besides the sampler: `cap` running threads, each possibly still joining the one it replaced,
  // and up to `cap` finished ones waiting for the next post() to join them.
  CHECK(peak.load() <= baseline + 1 + 3 * static_cast<int>(cap));
}
