// SPDX-License-Identifier: MIT
// pools/testing/watchdog.hpp — a hang fails the test instead of hanging CI.
//
//   pools::testing::watchdog dog(60s, "post under allocation failure");
//   ... code that must finish, destructors included ...
//   // dog's destructor: in time, nothing happens
//
// A thread waits for the scope to end; if the deadline passes first it prints what hung and
// aborts the process, which ctest reports as a failure (with the name given here). A destructor
// spinning forever cannot be caught any other way: there is no exception to throw into it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace pools::testing {

class watchdog {
 public:
  watchdog(std::chrono::seconds limit, std::string what) : what_(std::move(what)) {
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(mutex_);
      // The predicate under the lock: a notify before the wait began is not lost.
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: \"%s\" did not finish within %lld s: aborting\n", what_.c_str(),
                     static_cast<long long>(limit.count()));
        std::fflush(stderr);
        std::abort();
      }
    });
  }
  ~watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace pools::testing
