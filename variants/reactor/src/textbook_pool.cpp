// SPDX-License-Identifier: MIT
// The textbook reactor, written out. Read textbook_pool.hpp first, then loop::run() below.
//
// One design rule makes the rest simple: every other thread talks to a loop through one door,
// its queue of tasks (under a mutex, with a wake() of its poller). Everything else a loop has —
// its timers, its fd -> callback map, its stop flag — belongs to the loop's own thread and needs
// no lock: post_after(), watch(), unwatch() and the destructor hand their change to the loop as a
// task. (The poller's set of fds is thread-safe: add() and remove() may come from any thread,
// which is how watch() and unwatch() report a bad fd at once.)
// The poller (src/poller.hpp) is where the loop sleeps: epoll and an eventfd on Linux
// (poller_epoll.cpp: read it with this file), poll() and a pipe in the portable build.
// The POOLS_TRACE_* lines record the loop's events for --trace (pools/trace.hpp): a posted task
// (post, task), a sleep in the poller (park), a wake-up, an fd or timer callback (io
// completion). Each loop is its own "pool" there, as it has its own queue. Without
// -DPOOLS_TRACE=ON they compile to nothing; read past them.
#include <pools/reactor/textbook_pool.hpp>
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>
#include <pools/unhandled_exception.hpp>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "poller.hpp"

namespace pools::reactor {

namespace {

// The poller takes its timeout in whole milliseconds (as epoll_wait and poll do). Round the time
// left *up*: rounded down, the loop would wake just before the deadline, find nothing due, and
// spin with timeout 0 until it is. (Capped at INT_MAX ms, 24 days: the loop then simply waits again.)
int timeout_until(textbook_pool::clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - textbook_pool::clock::now());
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(left.count(), 0, INT_MAX));
}

}  // namespace

thread_local textbook_pool::loop* textbook_pool::current_ = nullptr;

struct textbook_pool::loop {
  // The kernel watches this loop's fds and wakes the thread when one is ready, or when another
  // thread calls poller.wake(): a thread asleep in the kernel is out of reach of any mutex or
  // condition variable. A wake made *before* the loop went to sleep still wakes it: none is lost.
  detail::poller poller;

  std::mutex m;             // guards the door: queue and exited
  std::vector<task> queue;  // posted, not yet run
  bool exited = false;      // drained and left: anything added now would never run

  // The loop thread's own. Timers ordered by deadline, equal deadlines in the order they came.
  // (io_context keeps a binary heap: faster, the same idea.)
  std::multimap<clock::time_point, task> timers;
  std::unordered_map<int, unique_function<void(std::uint32_t)>> watched;
  bool stopping = false;  // the destructor's last task has run: drain, then leave
  std::size_t index;      // which loop of the pool: names its track in a trace (POOLS_TRACE_*)
  std::thread thread;     // last: it starts once everything above exists

  explicit loop(std::size_t i) : index(i) {
    thread = std::thread([this] { run(); });
  }

  // Queues f; false if the loop has exited. (An rvalue reference, not a value: add() takes f only
  // when it accepts it, so the caller can send a refused f elsewhere.)
  bool add(task&& f) {
    std::lock_guard lock(m);
    if (exited) return false;
    // Wake the loop only if the queue was empty. Otherwise the write that made it non-empty is
    // still pending (or the loop has yet to take the queue), and the loop takes it all at once.
    const bool was_empty = queue.empty();
    queue.push_back(std::move(f));
    POOLS_TRACE_POST(this, 0);
    // The wake is written under the lock, although the woken loop may then wait for it briefly:
    // once the lock is free an awake loop can run f, and f may let the pool be destroyed (the
    // last task a drain waited for). The unlock must be this call's last touch of the loop.
    if (was_empty) POOLS_TRACE_WAKE(this, index);
    if (was_empty) poller.wake();
    return true;
  }

  void run() {
    current_ = this;
    POOLS_TRACE_WORKER(this, "reactor textbook", static_cast<unsigned>(index));
    std::vector<task> batch;
    for (;;) {
      // Sleep until an fd is ready or a wake() comes, or until the earliest deadline; not at all
      // if tasks are waiting, or timers are due.
      int timeout = timers.empty() ? -1 : timeout_until(timers.begin()->first);
      {
        std::lock_guard lock(m);
        if (!queue.empty()) timeout = 0;
        exited = stopping && timeout != 0;  // drained: no task, no due timer (later ones: dropped)
        if (exited) return;
      }
      // One ready fd per wake-up (fd -1: a wake(), or the time ran out). An error from the
      // poller is a bug: the exception leaves the thread (std::terminate).
      if (timeout != 0) POOLS_TRACE_PARK_BEGIN(this);  // a real sleep (timeout 0 only polls)
      const detail::poller::ready ready = poller.wait(timeout);
      if (timeout != 0) POOLS_TRACE_PARK_END(this);
      // No callback yet (its task has not run) or none any more: skip; level triggering reports
      // the fd again while it stays ready.
      if (auto it = watched.find(ready.fd); it != watched.end()) {
        auto call = [&] { it->second(ready.events); };  // `it` stays valid: only tasks erase
        POOLS_TRACE_IO_COMPLETION(ready.fd);
        invoke_reporting(call);
      }
      // Due timers, earliest first. The wake-up may have come early (a task, an fd): now()
      // decides, never the wake-up, so a timer can run late (busy loop) but never early.
      for (const auto now = clock::now(); !timers.empty() && timers.begin()->first <= now;) {
        auto timer = timers.extract(timers.begin());
        POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(&timer.mapped()));  // a timer is due
        invoke_reporting(timer.mapped());
      }
      // Take the whole queue under the lock — a swap: O(1), and the two vectors keep their
      // capacity — and run it *outside* the lock: a task may post (which takes this lock) or run
      // long, and posters must never wait for a task. Tasks posted meanwhile land in the fresh
      // queue and run next round, after one more look at the fds: a task that keeps posting
      // tasks cannot starve the I/O.
      {
        std::lock_guard lock(m);
        batch.swap(queue);
      }
      for (auto& f : batch) POOLS_TRACE_TASK(0, invoke_reporting(f));
      batch.clear();  // destroys what the tasks captured, outside the lock too
    }
  }
};

// Delegating to the (private, empty) default constructor makes the object complete as soon as
// that returns: if this body throws (a loop fails to start), ~textbook_pool() runs and stops the
// loops already started.
textbook_pool::textbook_pool(std::size_t threads) : textbook_pool() {
  threads = pools::thread_count(threads);  // 0: one loop per hardware thread, as in every pool
  for (std::size_t i = 0; i < threads; ++i) loops_.push_back(std::make_unique<loop>(i));
}

// The stop request is a task too, queued behind everything posted so far; every loop gets one
// before any is joined, so they drain side by side. All are joined before any is destroyed: a
// task draining on one loop may still post through loops_.
textbook_pool::~textbook_pool() {
  for (auto& l : loops_) l->add([&stopping = l->stopping] { stopping = true; });
  for (auto& l : loops_) l->thread.join();
}

void textbook_pool::post(task f) {
  if (loops_[next_.fetch_add(1, std::memory_order_relaxed) % loops_.size()]->add(std::move(f))) return;
  // While the pool drains, each loop exits once it has run dry. Only a task of this pool may
  // still post then (executor.hpp, rule 3), and the loop running that task cannot exit before
  // the task returns: so work aimed at a loop that has exited stays on the poster's own loop.
  // (add() moves from f only when it accepts it.)
  // NOLINTNEXTLINE(bugprone-use-after-move)
  if (current_ == nullptr || !current_->add(std::move(f)))
    throw std::logic_error("pools::reactor::textbook_pool: post to a destroyed pool");
}

// The deadline is fixed now, from the caller's clock; the timer travels to a loop as a task,
// which files it among that loop's timers (current_: the loop running the task).
void textbook_pool::post_after(clock::duration delay, task f) {
  post([deadline = clock::now() + delay, f = std::move(f)]() mutable {
    current_->timers.emplace(deadline, std::move(f));
  });
}

// poller.add() from this thread takes effect at once, even while fd's loop sleeps in the poller.
// The callback follows as a task; should fd be ready before that task has run, the loop finds
// no callback and skips the event, and level triggering reports it again on the next round.
// Out of memory, either half undoes the poller's: a watched fd without a callback would be
// skipped forever (and, while ready, wake the loop forever), and could never be watched again.
// Here the caller gets std::bad_alloc; on the loop, the task reports it (invoke_reporting).
void textbook_pool::watch(int fd, std::uint32_t events, unique_function<void(std::uint32_t)> callback) {
  loop& l = owner(fd);
  task install = [&l, fd, cb = std::move(callback)]() mutable {
    try {
      l.watched[fd] = std::move(cb);
    } catch (...) {
      l.poller.remove(fd);
      throw;
    }
  };
  l.poller.add(fd, events);
  try {
    l.add(std::move(install));
  } catch (...) {
    l.poller.remove(fd);
    throw;
  }
}

// Lifetimes. Once the poller has removed fd, it reports it no more; the callback itself
// is destroyed by a task on fd's loop, so never while it runs. On fd's own loop thread — in fd's
// callback, the usual place: it has seen EOF — that is the end: the loop erases the callback in
// the same round, before it waits again. From another thread it is not: the loop may be holding
// an event for fd, or take one for a new fd of the same number before the erasing task has run,
// and call the old callback once more. So unwatch and close an fd from its own callback. And
// unwatch before close: epoll watches the open file, not the number; if the fd was dup()ed,
// closing this number leaves the file watched.
// The erasing task is queued first: if that runs out of memory, nothing has changed yet.
void textbook_pool::unwatch(int fd) {
  loop& l = owner(fd);
  l.add([&l, fd] { l.watched.erase(fd); });
  l.poller.remove(fd);
}

}  // namespace pools::reactor
