// SPDX-License-Identifier: MIT
// src/thread_pool.cpp — the public face of the scheduler.
#include <pools/fibers/thread_pool.hpp>

#include "scheduler.hpp"

namespace pools::fibers {

namespace {
pool_options with_threads(std::size_t threads) {
  pool_options o;
  o.threads = threads;
  return o;
}
}  // namespace

thread_pool::thread_pool(std::size_t threads) : thread_pool(with_threads(threads)) {}

thread_pool::thread_pool(const pool_options& options)
    : scheduler_(std::make_unique<detail::scheduler>(options)) {}

// Drain first, while scheduler_ still points at a live scheduler: tasks running during the drain
// may post to this pool.
thread_pool::~thread_pool() {
  scheduler_->shutdown();
}

std::size_t thread_pool::concurrency() const noexcept {
  return scheduler_->concurrency();
}

pool_statistics thread_pool::stats() const {
  return scheduler_->stats();
}

void thread_pool::submit_or_delete(detail::task_base* t) {
  try {
    detail::submit(*scheduler_, t);
  } catch (...) {
    t->destroy(t);
    throw;
  }
}

}  // namespace pools::fibers
