// SPDX-License-Identifier: MIT
// bench_stdexec_pool — exec::static_thread_pool, the thread pool of NVIDIA's stdexec (the
// reference implementation of C++26 std::execution): per-thread work-stealing queues, threads
// parked on a condition variable. Built only when stdexec is found (cmake/stdexec.cmake).
//
// Every task is one sender, `schedule(pool) | then(f)`, started detached (exec::start_detached
// allocates its operation state): the way a P2300 user
// hands a pool a callback. Fork-join is written in continuation-passing style
// (pools/bench/cps_workloads.hpp), as for asio_pool: a task never blocks on its children.
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/unhandled_exception.hpp>

#include <atomic>
#include <cstdint>
#include <exec/start_detached.hpp>
#include <exec/static_thread_pool.hpp>
#include <memory>
#include <stdexec/execution.hpp>
#include <thread>

namespace {
using namespace pools::bench;

// pools::Executor over exec::static_thread_pool. The pool's destructor stops its threads whatever
// is queued, so this one first waits until every started task has run: the drain the concept
// promises.
class stdexec_pool_executor {
 public:
  explicit stdexec_pool_executor(std::size_t threads)
      : pool_(static_cast<std::uint32_t>(threads)), threads_(threads) {}
  ~stdexec_pool_executor() {
    while (outstanding_.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  }
  template <class F>
  void post(F&& f) {
    outstanding_.fetch_add(1, std::memory_order_relaxed);
    // noexcept: exec::start_detached takes only senders that cannot fail (there is no one to
    // hear the error); an exception of the task is reported by invoke_reporting instead.
    exec::start_detached(stdexec::schedule(pool_.get_scheduler()) |
                         stdexec::then([this, f = std::forward<F>(f)]() mutable noexcept {
                           pools::invoke_reporting(f);
                           outstanding_.fetch_sub(1, std::memory_order_release);
                         }));
  }
  std::size_t concurrency() const { return threads_; }

 private:
  exec::static_thread_pool pool_;
  std::size_t threads_;
  std::atomic<std::size_t> outstanding_{0};
};

auto make = [](unsigned threads) { return std::make_unique<stdexec_pool_executor>(threads); };

}  // namespace

int main(int argc, char** argv) {
  suite s("stdexec_pool");
  cps::add_post_only_workloads(s, make);
  s.unsupported("memory",
                "a sender on exec::static_thread_pool runs to completion; suspending one means a "
                "coroutine or a timer from elsewhere, not this pool");
  return s.main(argc, argv);
}
