// bench_futures — the futures pools in their own spelling. POOLS_BENCH_POOL picks the pool
// (pools::bench::pool_from_environment): the tuned thread_pool (default; detach_task,
// submit_task, submit_blocks) or the textbook_pool (post, pools::submit, pools::parallel_for_blocks),
// as futures/textbook.
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

#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

namespace {
using namespace pools::bench;
using pools::futures::textbook_pool;
using pools::futures::thread_pool;

// submit: the harness calls post(), which is detach_task() on the tuned pool.

struct submit_task_op {
  template <class F>
  auto operator()(thread_pool& pool, F&& f) const {
    return pool.submit_task(std::forward<F>(f));
  }
};

struct submit_blocks_op {  // the BS::thread_pool paper's spelling of vector_fill
  template <class F>
  void operator()(thread_pool& pool, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    pool.submit_blocks(first, last, std::forward<F>(f), blocks).get();
  }
};

constexpr const char* nested_wait_reason =
    "the futures style of fork-join is a task that submits its children and get()s their futures; "
    "each get() blocks a worker, and once every worker waits on children still in the queue the fixed pool "
    "deadlocks (variants/futures/README.md, 'Why nested waits deadlock'; tests/nested_wait_test.cpp). The "
    "continuation-passing rewrite that avoids it is bench_asio_pool's style, not this variant's";

template <class Pool>
int run(const pool_choice& choice, int argc, char** argv) {
  auto make = [](unsigned threads) { return std::make_unique<Pool>(threads); };
  suite s(choice.variant);
  s.add("submit", submit_workload(make));
  s.add("wakeup", wakeup_workload(make));
  if constexpr (std::is_same_v<Pool, thread_pool>) {
    s.add("submit_future", submit_future_workload(make, submit_task_op{}));
    s.add("vector_fill", vector_fill_workload(make, submit_blocks_op{}));
  } else {  // the textbook pool: pools::submit and pools::parallel_for_blocks, through post()
    s.add("submit_future", submit_future_workload(make));
    s.add("vector_fill", vector_fill_workload(make));
  }
  for (const char* w : {"fib", "skynet", "nqueens", "matmul"}) s.unsupported(w, nested_wait_reason);
  s.unsupported("memory",
                "a task can only wait by blocking its worker thread, so n suspended tasks need n threads; "
                "a futures pool has no way to suspend a task and free its thread");
  return s.main(argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  const pool_choice choice = pool_from_environment("futures");
  return choice.textbook ? run<textbook_pool>(choice, argc, argv) : run<thread_pool>(choice, argc, argv);
}
