// SPDX-License-Identifier: MIT
// bench_futures — the futures pools in their own spelling. Two environment variables pick the
// pool (flavours.txt lists the subjects compare.py makes of them):
//   POOLS_BENCH_POOL=tuned|textbook (pools::bench::pool_from_environment): the tuned thread_pool
//     (default; detach_task, submit_task, submit_blocks) or the textbook_pool (post, its submit,
//     pools::parallel_for_blocks), as futures/textbook.
//   POOLS_FUTURES_QUEUE=fifo|priority: the tuned pool with its two-lock segmented FIFO (default)
//     or priority_thread_pool, the same pool whose queue is one spin-locked heap, as
//     futures/priority: one rung of the ladder (docs/optimizations.md) measured alone.
//
// Fork-join (fib, skynet, nqueens, matmul) is not registered. The futures way to write it is a
// task that submits its children and get()s their futures; on a fixed pool that blocks the
// worker, and once every worker is blocked on children that are still queued, nothing can run
// them: README.md ("Why nested waits deadlock") and tests/nested_wait_test.cpp show it. The
// callback rewrite that avoids it (continuation passing) is what bench_asio_pool measures; it is
// not the futures style, so it is not passed off as this variant's result.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/futures/textbook_pool.hpp>
#include <pools/futures/thread_pool.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace {
using namespace pools::bench;
using pools::futures::basic_thread_pool;
using pools::futures::priority_thread_pool;
using pools::futures::textbook_pool;
using pools::futures::thread_pool;
namespace tp = pools::futures::tp;

// submit: the harness calls post(), which is detach_task() on the tuned pools.

// submit_future: each pool's own way to get a std::future.
struct own_submit_op {
  template <class F>
  auto operator()(textbook_pool& pool, F&& f) const {
    return pool.submit(std::forward<F>(f));
  }
  template <tp::opt_t Options, class F>
  auto operator()(basic_thread_pool<Options>& pool, F&& f) const {
    return pool.submit_task(std::forward<F>(f));
  }
};

// vector_fill: the tuned pools' submit_blocks (the BS::thread_pool paper's spelling). The
// textbook pool has no loop of its own: it gets the harness's default, pools::parallel_for_blocks.
struct submit_blocks_op {
  template <tp::opt_t Options, class F>
  void operator()(basic_thread_pool<Options>& pool, std::int64_t first, std::int64_t last, F&& f,
                  std::size_t blocks) const {
    pool.submit_blocks(first, last, std::forward<F>(f), blocks).get();
  }
};

constexpr const char* nested_wait_reason =
    "the futures style of fork-join is a task that submits its children and get()s their futures; "
    "each get() blocks a worker, and once every worker waits on children still in the queue the fixed pool "
    "deadlocks (variants/futures/README.md, 'Why nested waits deadlock'; tests/nested_wait_test.cpp). The "
    "continuation-passing rewrite that avoids it is bench_asio_pool's style, not this variant's";

template <class Pool>
int run(const std::string& subject, int argc, char** argv) {
  auto make = [](unsigned threads) { return std::make_unique<Pool>(threads); };
  suite s(subject);
  s.add("submit", submit_workload(make));
  s.add("submit_future", submit_future_workload(make, own_submit_op{}));
  s.add("wakeup", wakeup_workload(make));
  if constexpr (std::is_same_v<Pool, textbook_pool>) {
    s.add("vector_fill", vector_fill_workload(make));
  } else {
    s.add("vector_fill", vector_fill_workload(make, submit_blocks_op{}));
  }
  for (const char* w : {"fib", "skynet", "nqueens", "matmul"}) s.unsupported(w, nested_wait_reason);
  s.unsupported("memory",
                "a task can only wait by blocking its worker thread, so n suspended tasks need n threads; "
                "a futures pool has no way to suspend a task and free its thread");
  return s.main(argc, argv);
}

// POOLS_FUTURES_QUEUE (the `priority` line of flavours.txt); true for priority. A queue is a
// choice of the tuned pool only: with the textbook pool any value but the default is refused.
bool priority_queue_from_environment(bool textbook) {
  const char* value = std::getenv("POOLS_FUTURES_QUEUE");
  const std::string_view chosen = value == nullptr ? "fifo" : value;
  if (chosen != "fifo" && chosen != "priority")
    fail_usage(fmt::format("POOLS_FUTURES_QUEUE='{}' is not a queue; use fifo or priority", chosen));
  if (textbook && chosen != "fifo")
    fail_usage(
        "POOLS_FUTURES_QUEUE chooses the tuned pool's queue; the textbook pool has only its std::queue");
  return chosen == "priority";
}

}  // namespace

int main(int argc, char** argv) {
  const pool_choice choice = pool_from_environment("futures");
  const bool priority = priority_queue_from_environment(choice.textbook);
  if (choice.textbook) return run<textbook_pool>(choice.variant, argc, argv);
  if (priority) return run<priority_thread_pool>(choice.variant + "/priority", argc, argv);
  return run<thread_pool>(choice.variant, argc, argv);
}
