// SPDX-License-Identifier: MIT
// pools/park_hook.hpp — lets the idle workers of a pool wait in someone else's event loop.
//
// A work-stealing pool (pools::coroutines, pools::fibers) puts a worker to sleep when it has
// nothing to do: on a futex or a condition variable. A server built on such a pool also needs
// somebody to wait for sockets (epoll). If that is a thread of its own, every request crosses
// threads twice — socket ready on the I/O thread, wake a worker to run the connection, hand the
// next read back — and each crossing is a futex wake plus a context switch. Handing the pool a
// park_hook makes the worker's sleep *be* the I/O wait: an idle worker blocks in the hook (an
// Asio io_context's run_one), runs the completions that arrive there on its own thread, and the
// connection they resume is pushed onto that worker's own deque. One thread, no crossing.
//
//   worker loop:  run tasks ─▶ nothing left ─▶ spin: poll(i) + look for work ─▶ park(i, deadline)
//                     ▲                                                           │
//                     └──── woken: wake(i), the deadline, or a completion ran ◀───┘
//
// The pool keeps its own wake-up protocol (who is idle, who to wake); the hook replaces only the
// blocking call and the call that ends it. Each worker index has its own hook state, so a wake
// reaches the worker it was meant for. The pools stay free of Asio: the server implements the
// hook (server/include/pools/server/worker_io.hpp).
#pragma once

#include <chrono>

namespace pools {

class park_hook {
 public:
  using clock = std::chrono::steady_clock;

  park_hook() = default;
  park_hook(const park_hook&) = delete;
  park_hook& operator=(const park_hook&) = delete;

  /// On worker `index`, which has no task: block until wake(index), until `deadline`
  /// (time_point::max(): none), or until foreign work has run (it may have given the pool tasks).
  /// Returning early is always allowed: the pool looks for work and parks again.
  virtual void park(unsigned index, clock::time_point deadline) = 0;
  /// On worker `index`, between tasks: run the foreign work that is ready, without blocking.
  virtual void poll(unsigned index) = 0;
  /// Any thread: end worker `index`'s current park(), or make its next one return at once (a
  /// wake must never be lost between the pool's decision to sleep and the blocking call).
  virtual void wake(unsigned index) = 0;

 protected:
  ~park_hook() = default;  // not owned by the pool: it must outlive the pool
};

}  // namespace pools
