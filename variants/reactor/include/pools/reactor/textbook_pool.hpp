// SPDX-License-Identifier: MIT
// pools/reactor/textbook_pool.hpp — an epoll reactor written out by hand: what io_context does
// inside, small enough to read in one sitting (the walk-through is in README.md). The portable
// build (POOLS_PORTABLE, and every system but Linux) sleeps in poll() instead (src/poller.hpp).
//
//   pools::reactor::textbook_pool pool(2);                       // 2 threads, one loop each
//   pool.post([] { ... });                                       // run soon, on some loop
//   pool.post_after(50ms, [] { ... });                           // run no earlier than 50 ms from now
//   pool.watch(fd, POLLIN, [](std::uint32_t events) { ... });    // run whenever fd is readable
//   pool.unwatch(fd);                                            // ... and no longer
//
// The lesson is the inverted control flow: nobody here calls read() and waits. You tell the
// loop what to do *when* something happens, and the loop calls you. Each thread runs one loop:
//
//   for (;;) {
//     sleep in epoll_wait() until an fd is ready, a task is posted, or the next timer is due;
//     if it was an fd, call that fd's callback;
//     run the timers that are due and the tasks that were posted;
//   }
//
// Rules for the code you hand to it (the callbacks):
//  * Never block. The loop's one thread serves every fd, timer and task of that loop; while a
//    callback sleeps, waits for a lock held elsewhere or calls a blocking read(), all of them
//    wait. Ask the loop to call you back instead (watch an fd, post_after a timer).
//  * An exception escaping any callback goes to pools::report_unhandled_exception; the loop
//    goes on.
//
// Destruction drains (the pools::Executor contract): every posted task runs, including tasks
// posted by tasks while the pool drains, and so does every timer that is *due* by then. A timer
// that is not yet due is destroyed without running: running it early would break its one
// promise (never before the deadline), and waiting for it would make the destructor take as
// long as the furthest timer — an hour-long timeout would hold up the program's exit, and this
// pool has no way to cancel a timer. (io_context makes the other choice: a pending timer is
// outstanding work, run() waits for it, and you cancel it first; see timer.hpp.) Watched fds
// do not keep the pool alive either; their callbacks are destroyed with it. The pool never
// closes an fd: fds belong to the caller.
//
// Syscall failures throw std::system_error naming the call ("epoll_ctl", "poll watch", ...). Destroying the
// pool from one of its own callbacks is undefined (it would wait for itself).
#pragma once

#include <pools/unique_function.hpp>

#include <poll.h>  // POLLIN, POLLOUT, ... for watch() (on Linux equal to EPOLLIN, EPOLLOUT, ...)

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pools::reactor {

class textbook_pool {
 public:
  using clock = std::chrono::steady_clock;
  using task = unique_function<void()>;

  /// Starts `threads` loops, one thread each (0: one per hardware thread).
  explicit textbook_pool(std::size_t threads);  // not copyable (the atomic is not)
  /// Drains (see above), then joins the threads.
  ~textbook_pool();

  /// Runs f() once on one of the loops (round-robin), from any thread, also from a callback.
  void post(task f);

  /// Runs f() once on one of the loops, no earlier than `delay` from now. Timers of one loop
  /// run in deadline order (equal deadlines in the order they were added).
  void post_after(clock::duration delay, task f);

  /// Calls callback(ready events) on fd's loop (fd mod concurrency()) whenever fd has one of
  /// `events` (POLLIN, POLLOUT, ...): level-triggered, so it is called again and again while
  /// the condition lasts. Calls for one fd never overlap. An fd already watched, or one epoll
  /// cannot watch (a bad fd, a regular file), throws std::system_error (EEXIST, EBADF, EPERM);
  /// out of memory, std::bad_alloc, and fd is not watched (the .cpp: also when the loop runs out).
  void watch(int fd, std::uint32_t events, unique_function<void(std::uint32_t)> callback);

  /// Stops the callbacks of fd. Called from fd's own callback (the usual case: it saw EOF) or
  /// elsewhere on fd's loop, no further call happens; from another thread, the loop may call it
  /// once more (see the .cpp). Call it before closing fd. Not watched -> std::system_error.
  void unwatch(int fd);

  /// The number of loops (= threads).
  std::size_t concurrency() const noexcept { return loops_.size(); }

 private:
  struct loop;  // src/textbook_pool.cpp: one poller (epoll fd and eventfd), one queue, one thread

  textbook_pool() = default;  // the public constructor delegates to it (see the .cpp)
  loop& owner(int fd) const { return *loops_[static_cast<std::size_t>(fd) % loops_.size()]; }

  std::vector<std::unique_ptr<loop>> loops_;
  std::atomic<std::size_t> next_{0};   // round-robin cursor for post: the one shared counter
  static thread_local loop* current_;  // the loop this thread runs, if any
};

}  // namespace pools::reactor
