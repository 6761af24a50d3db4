// SPDX-License-Identifier: MIT
#include <pools/server/worker_io.hpp>
#include <pools/unhandled_exception.hpp>

#include <boost/asio/post.hpp>

namespace pools::server {

namespace {
// The io_context the calling worker runs; set on its first park() or poll().
thread_local const boost::asio::execution_context* tl_owned = nullptr;
}  // namespace

worker_io::worker_io(std::size_t workers) {
  contexts_.reserve(workers);
  guards_.reserve(workers);
  for (std::size_t i = 0; i < workers; ++i) {
    // Hint 1: one thread runs each context, so Asio may skip waking other threads and keep
    // completions posted from that thread in its private queue.
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
}

// The pool is gone by now (declared after this object). Destroying the contexts destroys the
// handlers still queued or pending there, and with them the last references to closed sessions.
worker_io::~worker_io() = default;

boost::asio::any_io_executor worker_io::next_executor() {
  if (next_ >= contexts_.size()) next_ = 0;
  return contexts_[next_++]->get_executor();
}

bool worker_io::runs_on_this_thread(const boost::asio::execution_context& ctx) noexcept {
  return tl_owned == &ctx;
}

// A handler that throws unwinds out of run_one()/poll(); Asio leaves the context usable. The
// pool must not see it (it would terminate the worker): pools::invoke_reporting reports it, as
// every executor here does.
void worker_io::park(unsigned index, clock::time_point deadline) {
  auto& ctx = *contexts_[index];
  tl_owned = &ctx;
  // One handler (or the deadline, or a wake's no-op), then whatever else is ready: a burst of
  // completions is taken in one go before the pool looks at its deques again.
  auto wait = [&] {
    const std::size_t ran =
        deadline == clock::time_point::max() ? ctx.run_one() : ctx.run_one_until(deadline);
    if (ran != 0) ctx.poll();
  };
  pools::invoke_reporting(wait);
}

void worker_io::poll(unsigned index) {
  auto& ctx = *contexts_[index];
  tl_owned = &ctx;
  auto ready = [&] { ctx.poll(); };
  pools::invoke_reporting(ready);
}

void worker_io::wake(unsigned index) {
  // A queued no-op: run_one() returns for it whether the worker is blocked already or only about
  // to block, so a wake is never lost.
  boost::asio::post(*contexts_[index], [] {});
}

}  // namespace pools::server
