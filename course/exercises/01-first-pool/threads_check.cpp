// SPDX-License-Identifier: MIT
// threads_check.cpp — a rule of exercise 01's report card that the conformance suite does not
// state: a pool runs its tasks on threads of its own, several at once. A "pool" that runs every
// task inline on the caller (pools::inline_executor is one) passes every contract rule of the
// suite, each task run exactly once; here it fails. Built per scaffolded pool by
// course/CMakeLists.txt (POOL_HEADER, POOL_TYPE), run by course/tools/grade.py as one more rule.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <course/check.hpp>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include POOL_HEADER

int main() {
  using namespace std::chrono_literals;
  course::report report("01-first-pool");
  report.test("tasks run on the pool's own threads, concurrently");
  course::deadline whole("two tasks on a 2-thread pool", 30s,
                         "a task that never ran, or a pool that never drained");

  const std::thread::id poster = std::this_thread::get_id();
  std::atomic<bool> on_poster{false};
  std::atomic<int> started{0};
  std::atomic<bool> overlapped{true};
  std::mutex m;
  std::condition_variable cv;
  int done = 0;
  std::string threw;
  {
    POOL_TYPE pool(2);
    for (int i = 0; i < 2; ++i) {
      try {
        pool.post([&] {
          if (std::this_thread::get_id() == poster) on_poster = true;
          started.fetch_add(1);
          // Each task waits (bounded) for the other to start: on two worker threads both run at
          // once; a pool that runs them one after the other, or inline, never gets there.
          const auto until = std::chrono::steady_clock::now() + 5s;
          while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
          if (started.load() < 2) overlapped = false;
          {
            std::lock_guard lock(m);
            ++done;
          }
          cv.notify_all();
        });
      } catch (const std::exception& e) {
        threw = e.what();
        break;
      }
    }
    if (threw.empty()) {
      std::unique_lock lock(m);
      cv.wait_for(lock, 15s, [&] { return done == 2; });
    }
  }  // the destructor drains
  if (!threw.empty()) {
    report.require(false, "post() threw: " + threw);
    return report.finish();
  }
  report.require(done == 2,
                 "two tasks posted to a 2-thread pool both ran (" + std::to_string(done) + " did)");
  report.require(!on_poster.load(),
                 on_poster.load()
                     ? "a task ran on the thread that posted it: a pool runs its tasks on its own "
                       "worker threads, and post() returns at once"
                     : "every task ran on a worker thread, not on the thread that posted it");
  report.require(overlapped.load(),
                 overlapped.load()
                     ? "two tasks on a 2-thread pool ran at the same time"
                     : "two tasks on a 2-thread pool never ran at the same time: the pool runs one "
                       "task at a time (one worker? a lock held while a task runs? tasks run inline?)");
  return report.finish();
}
