// SPDX-License-Identifier: MIT
// course/threads_rule.hpp — exercise 01's rule that the conformance suite does not state: a pool
// runs its tasks on threads of its own, several at once. A "pool" that runs every task inline on
// the caller (pools::inline_executor is one) passes every contract rule of the suite, each task
// run exactly once; here it fails. Used by 01's graded check (check.cpp) and by the report card's
// rule (threads_check.cpp), so both judge a pool by the same run.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <course/check.hpp>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

namespace course {

// Posts two tasks to a 2-thread Pool and requires: both ran, neither on the posting thread, and
// both at the same time. Each task waits (bounded) for the other to start: on two worker threads
// both run at once; a pool that runs them one after the other, or inline, never gets there.
template <class Pool>
void require_own_threads(report& r) {
  using namespace std::chrono_literals;
  deadline whole("two tasks on a 2-thread pool", 30s, "a task that never ran, or a pool that never drained");
  const std::thread::id poster = std::this_thread::get_id();
  std::atomic<bool> on_poster{false};
  std::atomic<int> started{0};
  std::atomic<bool> overlapped{true};
  std::mutex m;
  std::condition_variable cv;
  int done = 0;  // guarded by m
  std::string threw;
  {
    Pool pool(2);
    r.require(pool.concurrency() == 2,
              "concurrency() of a 2-thread pool is " + std::to_string(pool.concurrency()));
    for (int i = 0; i < 2 && threw.empty(); ++i) {
      try {
        pool.post([&] {
          if (std::this_thread::get_id() == poster) on_poster = true;
          started.fetch_add(1);
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
      }
    }
    if (threw.empty()) {
      std::unique_lock lock(m);
      cv.wait_for(lock, 15s, [&] { return done == 2; });
    }
  }  // the destructor drains
  if (!threw.empty()) {
    r.require(false, "post() threw: " + threw);
    return;
  }
  r.require(done == 2, "two tasks posted to a 2-thread pool both ran (" + std::to_string(done) + " did)");
  r.require(!on_poster.load(),
            on_poster.load() ? "a task ran on the thread that posted it: a pool runs its tasks on its own "
                               "worker threads, and post() returns at once"
                             : "every task ran on a worker thread, not on the thread that posted it");
  r.require(overlapped.load(),
            overlapped.load()
                ? "two tasks on a 2-thread pool ran at the same time"
                : "two tasks on a 2-thread pool never ran at the same time: the pool runs one "
                  "task at a time (one worker? a lock held while a task runs? tasks run inline?)");
}

}  // namespace course
