// SPDX-License-Identifier: MIT
// The textbook pool: a post from outside the pool must not touch the pool after the task it
// posted has let the owner destroy it (its README, "Destruction, out of memory, out of threads").
//
// The window is in loop::add(): the task is queued, and the poster then writes the loop's eventfd
// to wake it. If the write came after the unlock, an awake loop could take the task meanwhile,
// run it, let main destroy the pool, and the write would go to a closed (or reused) descriptor.
// The test forces that interleaving with a seam: this binary defines eventfd_write, which holds
// the poster that asks for it until released (bounded). The pool lives in storage of its own, so
// a late touch lands in dead but mapped memory and the failure shows as the poster's error.
#include <doctest/doctest.h>

#include <pools/reactor/textbook_pool.hpp>
#include <pools/wait_group.hpp>

#include <dlfcn.h>
#include <sys/eventfd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>

namespace pr = pools::reactor;
using namespace std::chrono_literals;

namespace {

thread_local bool hold_here = false;  // the next eventfd_write on this thread waits
std::mutex hold_mutex;
std::condition_variable hold_cv;
bool holding = false, released = false;  // guarded by hold_mutex

void release_holder() {
  {
    std::lock_guard lock(hold_mutex);
    released = true;
  }
  hold_cv.notify_all();
}

}  // namespace

extern "C" int eventfd_write(int fd, eventfd_t value) {
  using fn = int (*)(int, eventfd_t);
  static const auto real = reinterpret_cast<fn>(::dlsym(RTLD_NEXT, "eventfd_write"));
  if (real == nullptr) std::abort();
  if (hold_here) {
    hold_here = false;
    std::unique_lock lock(hold_mutex);
    holding = true;
    hold_cv.notify_all();
    hold_cv.wait_for(lock, 2s, [] { return released; });  // bounded: never a hang
  }
  return real(fd, value);
}

// The seam is the eventfd's write: the portable poller (POOLS_PORTABLE, poll + a pipe) wakes its
// loop with write() on a pipe, which this binary does not intercept. loop::add() is the same code
// on both paths, so the Linux build's run of this test covers it.
#ifdef POOLS_PORTABLE
constexpr bool eventfd_seam = false;
#else
constexpr bool eventfd_seam = true;
#endif

TEST_CASE("reactor textbook_pool: an outside post's last touch comes before the destructor returns") {
  if (!eventfd_seam) {
    MESSAGE("skipped: the portable poller wakes through a pipe, not the eventfd this test holds");
    return;
  }
  alignas(pr::textbook_pool) unsigned char storage[sizeof(pr::textbook_pool)];
  auto* pool = new (storage) pr::textbook_pool(1);
  // Keep the loop awake (running a task) while the outside post goes in, so that it can take the
  // posted task without the eventfd's wake.
  std::atomic<bool> go{false};
  pools::wait_group busy(1), ran(1);
  pool->post([&] {
    busy.done();
    while (!go.load()) std::this_thread::yield();
  });
  REQUIRE(busy.wait_for(10s));
  std::exception_ptr error;
  std::thread outside([&] {
    hold_here = true;
    try {
      pool->post([&] { ran.done(); });
    } catch (...) {
      error = std::current_exception();
    }
  });
  {
    std::unique_lock lock(hold_mutex);
    REQUIRE(hold_cv.wait_for(lock, 10s, [] { return holding; }));  // the poster is in its wake
  }
  go = true;
  // With the wake written under the loop's lock, the loop cannot take the task before the poster
  // leaves: release it after a while. Without, the task runs at once.
  if (!ran.wait_for(200ms)) release_holder();
  REQUIRE(ran.wait_for(10s));
  pool->~textbook_pool();
  release_holder();
  outside.join();
  CHECK_FALSE(error);  // failed before the fix: eventfd_write on the destroyed loop's descriptor
  if (error) {
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      MESSAGE("the poster got: " << std::string(e.what()));
    }
  }
}
