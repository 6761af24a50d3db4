// SPDX-License-Identifier: MIT
// bench_asio_pool — boost::asio::thread_pool, the reference for "post a callback" cost.
// Fork-join is written in continuation-passing style (pools/bench/cps_workloads.hpp): a handler
// must never block on its children inside a fixed pool.
#include <pools/bench/asio_workloads.hpp>
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/unhandled_exception.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <memory>

namespace {
using namespace pools::bench;

// pools::Executor over asio::thread_pool. ~thread_pool() would stop() and drop queued handlers;
// join() first lets the pool run out of work, which is the drain the concept promises.
class asio_pool_executor {
 public:
  explicit asio_pool_executor(std::size_t threads) : pool_(threads), threads_(threads) {}
  ~asio_pool_executor() { pool_.join(); }
  template <class F>
  void post(F&& f) {
    boost::asio::post(pool_, [f = std::forward<F>(f)]() mutable { pools::invoke_reporting(f); });
  }
  std::size_t concurrency() const { return threads_; }
  boost::asio::thread_pool& pool() { return pool_; }

 private:
  boost::asio::thread_pool pool_;
  std::size_t threads_;
};

auto make = [](unsigned threads) { return std::make_unique<asio_pool_executor>(threads); };

}  // namespace

int main(int argc, char** argv) {
  suite s("asio_pool");
  cps::add_post_only_workloads(s, make);
  s.add("memory", asio_timer_memory_workload(
                      make, [](asio_pool_executor& ex, std::size_t) { return ex.pool().get_executor(); }));
  return s.main(argc, argv);
}
