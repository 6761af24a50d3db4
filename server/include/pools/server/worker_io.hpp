// SPDX-License-Identifier: MIT
// pools/server/worker_io.hpp — one Asio io_context per pool worker, run by that worker whenever
// it is idle: the park hook (pools/park_hook.hpp) of the fibers and coroutines drivers.
//
//   srv::worker_io io(threads);                 // before the pool: it must outlive it
//   pc::thread_pool pool(threads, io);          // idle worker i waits in io.context(i)
//   tcp::socket s(io.next_executor());          // a connection's socket lives on one worker
//
// Worker i is the only thread that ever runs context(i): it blocks in it (epoll) when it has no
// task, polls it while spinning and now and then between tasks. A socket completion therefore
// runs on the worker that owns the socket, and the fiber or coroutine it resumes goes onto that
// worker's own deque — the request never crosses threads unless another worker steals it.
// A connection loop that runs on its socket's worker starts the next operation in place
// (runs_on_this_thread); one that was stolen hands it over with a post.
#pragma once

#include <pools/park_hook.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <memory>
#include <vector>

namespace pools::server {

class worker_io final : public pools::park_hook {
 public:
  /// One io_context per worker, each kept from running out of work until destruction.
  explicit worker_io(std::size_t workers);
  ~worker_io();

  std::size_t size() const noexcept { return contexts_.size(); }
  boost::asio::io_context& context(std::size_t i) { return *contexts_.at(i); }
  /// The executor for the next accepted socket: the workers' contexts in turn. Called by the
  /// listener, on its control thread only.
  boost::asio::any_io_executor next_executor();
  /// True on the worker that runs `ctx` (once it has parked or polled for the first time).
  static bool runs_on_this_thread(const boost::asio::execution_context& ctx) noexcept;

  // pools::park_hook
  void park(unsigned index, clock::time_point deadline) override;
  void poll(unsigned index) override;
  void wake(unsigned index) override;

 private:
  using work_guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<work_guard> guards_;  // run_one() must block, not return "out of work"
  std::size_t next_ = 0;
};

}  // namespace pools::server
