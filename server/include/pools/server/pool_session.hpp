// SPDX-License-Identifier: MIT
// pools/server/pool_session.hpp — half-sync/half-async over any pools::Executor.
//
// The asynchronous half is the connection loop in Asio callbacks on the I/O thread
// (callback_session): it reads, parses, writes and owns the connection, so nothing there is shared.
// The synchronous half is the pool: each job is one task posted to it, which runs the job start to
// end on its worker (run_blocking: fib serially, /busy spinning, /sleep sleeping) and hands the
// result back with finish(), which hops onto the I/O thread. Only post() is used, so any executor
// that passes the conformance suite serves HTTP this way: server_futures and the generic driver
// (server/drivers/generic.cpp, for every variant without its own driver) both use this class.
//
// Each job is a task of its own, so a connection's pipelined jobs run concurrently, on as many
// workers as are free. The model's price: a job holds its worker for as long as it takes, so N
// workers serve at most N /sleep requests at once, and fib cannot fork (a task that waited for
// its children would hold a worker; once every worker waits, nothing runs the children).
#pragma once

#include <pools/executor.hpp>
#include <pools/server/callback_session.hpp>
#include <pools/server/work.hpp>

#include <cstdint>
#include <exception>
#include <memory>
#include <utility>

namespace pools::server {

template <pools::Executor Pool>
class pool_session : public callback_session {
 public:
  pool_session(tcp::socket socket, app& app, Pool& pool)
      : callback_session(std::move(socket), app), pool_(pool) {}

 private:
  void run_job(job j) override {
    // The task owns a reference to the session: the connection may close while the job is queued.
    auto task = [self = shared_from_this(), j] {
      // Dropped while queued (the shutdown deadline): nobody to answer, and the drain waits.
      if (self->abandoned()) return;
      std::uint64_t value = 0;
      try {
        value = run_blocking(j);
      } catch (const std::exception& e) {
        return self->finish(j, 0, e.what());
      }
      self->finish(j, value);
    };
    // A pool with a bounded queue (pools::futures with set_capacity: --queue-limit) says no
    // rather than blocking this I/O thread: the request gets its 503 at once.
    if constexpr (requires { pool_.try_post(task); }) {
      if (!pool_.try_post(std::move(task))) conn().reject(j);
    } else {
      pool_.post(std::move(task));
    }
  }

  Pool& pool_;
};

}  // namespace pools::server
