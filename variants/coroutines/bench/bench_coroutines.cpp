// SPDX-License-Identifier: MIT
// bench_coroutines — the coroutines variant in its own spelling, on either of its pools.
//
// POOLS_BENCH_POOL=textbook (pools::bench::pool_from_environment; the `textbook` line of
// flavours.txt) measures the textbook_pool as subject coroutines/textbook; unset or `tuned`, the
// work-stealing thread_pool. The coroutines below are the same for both: only the pool type the
// workloads are instantiated with differs.
//
// Fork/join is written with co_await when_all(...) (help-first; work-first with fork_scope under
// POOLS_BENCH_FORK=workfirst, and with fork_scope and stack_task under POOLS_BENCH_FORK=framestack,
// below): one coroutine per call (fib, skynet, nqueens),
// no cutoff, children forked onto the worker's deque for idle workers to steal. Each repetition
// enters the pool from main with sync_wait. The executor workloads (submit, submit_future, wakeup)
// go through post(), which is how code outside the pool hands it work; vector_fill splits the
// range with pools::index_blocks into one task per block and awaits them with when_all. memory
// keeps n coroutines suspended on one async_event at the same time.
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/coroutines/coroutines.hpp>
#include <pools/index_blocks.hpp>

#include <fmt/core.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace {
using namespace pools::bench;
namespace pc = pools::coroutines;

pc::task<std::uint64_t> fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  auto [a, b] = co_await pc::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

pc::task<std::uint64_t> skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) co_return first;
  const std::uint64_t child = size / skynet_fanout;
  // Ten children in one when_all, spelled out by an index sequence: a tuple, no allocation.
  auto parts = co_await [&]<std::size_t... I>(std::index_sequence<I...>) {
    return pc::when_all(skynet(first + I * child, child)...);
  }(std::make_index_sequence<skynet_fanout>{});
  co_return std::apply([](auto... v) { return (v + ...); }, parts);
}

pc::task<std::uint64_t> nqueens(int n, queens_board board) {
  if (board.row == n) co_return 1;
  std::vector<pc::task<std::uint64_t>> children;
  children.reserve(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) children.push_back(nqueens(n, board.with(c)));
  }
  std::uint64_t sum = 0;
  for (auto v : co_await pc::when_all(std::move(children))) sum += v;
  co_return sum;
}

// The same three, work-first (pools/coroutines/fork_scope.hpp; the `workfirst` line of
// flavours.txt, POOLS_BENCH_FORK=workfirst): each child but the last is forked (the worker runs
// it at once and a thief takes the parent's continuation), the last is called, then the join.
pc::task<std::uint64_t> wf_fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  pc::task<std::uint64_t> a = wf_fib(n - 1), b = wf_fib(n - 2);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.call(b);
  co_await scope.join();
  co_return co_await std::move(a) + co_await std::move(b);
}

pc::task<std::uint64_t> wf_skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) co_return first;
  const std::uint64_t child = size / skynet_fanout;
  std::array<pc::task<std::uint64_t>, skynet_fanout> parts;
  for (std::size_t i = 0; i < parts.size(); ++i) parts[i] = wf_skynet(first + i * child, child);
  pc::fork_scope scope;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) co_await scope.fork(parts[i]);
  co_await scope.call(parts.back());
  co_await scope.join();
  std::uint64_t sum = 0;
  for (auto& p : parts) sum += co_await std::move(p);
  co_return sum;
}

pc::task<std::uint64_t> wf_nqueens(int n, queens_board board) {
  if (board.row == n) co_return 1;
  // The children live in this frame (n <= nqueens_max_n, checked by the CLI), as libfork's
  // nqueens keeps its results in an array in its frame: a node allocates nothing from the heap
  // (a std::vector here cost about 190 instructions a node in malloc and free:
  // docs/optimizations.md, rung 21, "Where the instructions go").
  std::array<pc::task<std::uint64_t>, nqueens_max_n> children;
  std::size_t k = 0;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) children[k++] = wf_nqueens(n, board.with(c));
  }
  if (k == 0) co_return 0;
  pc::fork_scope scope;
  for (std::size_t i = 0; i + 1 < k; ++i) co_await scope.fork(children[i]);
  co_await scope.call(children[k - 1]);
  co_await scope.join();
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < k; ++i) sum += co_await std::move(children[i]);
  co_return sum;
}

// The sum of k finished children's results, for the stack_task forms below: a plain function, so
// the loop keeps its counter and its sum in registers; in a coroutine's body they would be locals
// of the frame, and GCC 12 stores those there at every step.
template <class Tasks>
std::uint64_t sum_results(Tasks& tasks, std::size_t k) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < k; ++i) sum += std::move(tasks[i]).result();
  return sum;
}

// The same three, work-first with frames on the worker's stack of frames (stack_task.hpp; the
// `framestack` line of flavours.txt, POOLS_BENCH_FORK=framestack): the same forks, calls and
// joins as above; the results are read by result(), a plain call, where a co_await is a
// suspension point (task.hpp), even when it does not suspend. A stack_task is not assigned, so
// skynet's ten children are initialised in place, and nqueens's in a stack_task_array (made in
// order, destroyed in reverse: LIFO).
pc::stack_task<std::uint64_t> st_fib(int n) {
  if (n < 2) co_return static_cast<std::uint64_t>(n);
  pc::stack_task<std::uint64_t> a = st_fib(n - 1), b = st_fib(n - 2);
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.call(b);
  co_await scope.join();
  co_return std::move(a).result() + std::move(b).result();
}

pc::stack_task<std::uint64_t> st_skynet(std::uint64_t first, std::uint64_t size);

template <std::size_t... I>
std::array<pc::stack_task<std::uint64_t>, sizeof...(I)> st_skynet_parts(std::uint64_t first,
                                                                        std::uint64_t child,
                                                                        std::index_sequence<I...>) {
  return {st_skynet(first + I * child, child)...};
}

pc::stack_task<std::uint64_t> st_skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) co_return first;
  const std::uint64_t child = size / skynet_fanout;
  std::array<pc::stack_task<std::uint64_t>, skynet_fanout> parts =
      st_skynet_parts(first, child, std::make_index_sequence<skynet_fanout>{});
  pc::fork_scope scope;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) co_await scope.fork(parts[i]);
  co_await scope.call(parts.back());
  co_await scope.join();
  co_return sum_results(parts, parts.size());
}

pc::stack_task<std::uint64_t> st_nqueens(int n, queens_board board) {
  if (board.row == n) co_return 1;
  pc::stack_task_array<std::uint64_t, nqueens_max_n> children;
  for (int c = 0; c < n; ++c) {
    if (board.can_place(c)) children.emplace([&] { return st_nqueens(n, board.with(c)); });
  }
  const std::size_t k = children.size();
  if (k == 0) co_return 0;
  pc::fork_scope scope;
  for (std::size_t i = 0; i + 1 < k; ++i) co_await scope.fork(children[i]);
  co_await scope.call(children[k - 1]);
  co_await scope.join();
  co_return sum_results(children, k);
}

// POOLS_BENCH_FORK: fib, skynet and nqueens through when_all (helpfirst, the default), through
// fork_scope (workfirst), or through fork_scope with stack_task (framestack).
enum class fork_style { help_first, work_first, frame_stack };
fork_style fork_with = fork_style::help_first;

template <class Pool>
std::uint64_t run_fib(Pool& pool, int n) {
  switch (fork_with) {
    case fork_style::frame_stack:
      return pc::sync_wait(pool, st_fib(n));
    case fork_style::work_first:
      return pc::sync_wait(pool, wf_fib(n));
    default:
      return pc::sync_wait(pool, fib(n));
  }
}
template <class Pool>
std::uint64_t run_skynet(Pool& pool, std::uint64_t leaves) {
  switch (fork_with) {
    case fork_style::frame_stack:
      return pc::sync_wait(pool, st_skynet(0, leaves));
    case fork_style::work_first:
      return pc::sync_wait(pool, wf_skynet(0, leaves));
    default:
      return pc::sync_wait(pool, skynet(0, leaves));
  }
}
template <class Pool>
std::uint64_t run_nqueens(Pool& pool, int n) {
  switch (fork_with) {
    case fork_style::frame_stack:
      return pc::sync_wait(pool, st_nqueens(n, queens_board{}));
    case fork_style::work_first:
      return pc::sync_wait(pool, wf_nqueens(n, queens_board{}));
    default:
      return pc::sync_wait(pool, nqueens(n, queens_board{}));
  }
}

pc::task<void> matmul(matrix_view c, matrix_view a, matrix_view b) {
  if (c.n <= matmul_cutoff) {
    matmul_kernel(c, a, b);
    co_return;
  }
  for (int round = 0; round < 2; ++round) {  // the two rounds write the same quadrants of C
    co_await pc::when_all(matmul(c.quadrant(0, 0), a.quadrant(0, round), b.quadrant(round, 0)),
                          matmul(c.quadrant(0, 1), a.quadrant(0, round), b.quadrant(round, 1)),
                          matmul(c.quadrant(1, 0), a.quadrant(1, round), b.quadrant(round, 0)),
                          matmul(c.quadrant(1, 1), a.quadrant(1, round), b.quadrant(round, 1)));
  }
}

template <class Pool>
std::unique_ptr<Pool> make_pool(unsigned threads) {
  return std::make_unique<Pool>(threads);
}

template <class Pool, class Body>
prepare_fn on_pool(Body body) {
  return [body](const params& p) -> repetition {
    std::shared_ptr<Pool> pool = make_pool<Pool>(p.threads);
    return [pool, body, n = p.n](rep_timer& timer, metrics& m) {
      // Steals during this repetition (the tuned pool counts them; the textbook pool has no
      // deques): how often a worker took work from another, a fork-join run's one number that
      // says how much the scheduling, not the forks, cost.
      if constexpr (requires { pool->stats().steals; }) {
        const std::uint64_t before = pool->stats().steals;
        body(*pool, n, timer, m);
        m["steals"] = static_cast<double>(pool->stats().steals - before);
      } else {
        body(*pool, n, timer, m);
      }
    };
  };
}

// submit with what the posting thread's frames cost: the share of them that came from the
// general allocator (malloc) rather than from its free list or a batch of frames the workers
// handed back through frame_allocator's transfer cache. Near 0 when the workers keep up with the
// poster (frames go round); near 1 when the poster runs ahead of them and every post pays malloc,
// as asio_pool's does (docs/results/history/coroutines.md, "the drain's count, split"). The
// repetition runs on the posting thread, so this thread's counters are its.
prepare_fn with_poster_frames(const prepare_fn& inner) {
  return [inner](const params& p) -> repetition {
    repetition run = inner(p);
    return [run](rep_timer& timer, metrics& m) {
      const auto before = pc::frame_allocator::this_thread_stats();
      run(timer, m);
      const auto after = pc::frame_allocator::this_thread_stats();
      const auto general = static_cast<double>(after.general_allocs - before.general_allocs);
      const auto cached = static_cast<double>(after.cache_hits - before.cache_hits);
      if (general + cached > 0) m["poster_frames_from_malloc"] = general / (general + cached);
    };
  };
}

// vector_fill's blocks as coroutines: one task per block, joined with when_all.
struct coroutine_blocks {
  template <class Pool, class F>
  void operator()(Pool& pool, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    auto run = [](pools::index_blocks<std::int64_t> split, F& fn) -> pc::task<void> {
      std::vector<pc::task<void>> tasks;
      tasks.reserve(split.count());
      for (std::size_t k = 0; k < split.count(); ++k) {
        tasks.push_back([](std::pair<std::int64_t, std::int64_t> range, F& g) -> pc::task<void> {
          g(range.first, range.second);
          co_return;
        }(split[k], fn));
      }
      co_await pc::when_all(std::move(tasks));
    };
    pc::sync_wait(pool, run(pools::index_blocks<std::int64_t>(first, last, blocks), f));
  }
};

// memory: n coroutines suspended on one event at once. Each counts down `suspended` just before
// its co_await; once all have, RSS is read; then the event is set and every coroutine must finish.
template <class Pool>
prepare_fn memory_workload() {
  return [](const params& p) -> repetition {
    std::shared_ptr<Pool> pool = make_pool<Pool>(p.threads);
    return [pool, n = p.n](rep_timer& timer, metrics& out) {
      pc::async_event go;
      pc::async_latch suspended(n), finished(n);
      std::atomic<std::int64_t> resumed{0};
      auto waiter = [](pc::async_event& e, pc::async_latch& s, pc::async_latch& f,
                       std::atomic<std::int64_t>& r) -> pc::task<void> {
        s.count_down();
        co_await e;
        r.fetch_add(1, std::memory_order_relaxed);
        f.count_down();
      };
      auto wait_for = [](pc::async_latch& l) -> pc::task<void> { co_await l; };
      const auto before = current_rss_bytes();
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) pool->spawn(waiter(go, suspended, finished, resumed));
      pc::sync_wait(*pool, wait_for(suspended));
      timer.stop();
      const auto after = current_rss_bytes();
      go.set();
      pc::sync_wait(*pool, wait_for(finished));
      if (resumed.load() != n)
        fail_verification(fmt::format("memory: {} of {} coroutines resumed", resumed.load(), n));
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
    };
  };
}

// Every workload, for one pool type.
template <class Pool>
void add_workloads(suite& s) {
  s.add("fib", on_pool<Pool>([](Pool& pool, std::int64_t n, rep_timer&, metrics&) {
          check_fib(static_cast<int>(n), run_fib(pool, static_cast<int>(n)));
        }));
  s.add("skynet", on_pool<Pool>([](Pool& pool, std::int64_t n, rep_timer&, metrics&) {
          const auto leaves = static_cast<std::uint64_t>(n);
          check_skynet(leaves, run_skynet(pool, leaves));
        }));
  s.add("nqueens", on_pool<Pool>([](Pool& pool, std::int64_t n, rep_timer&, metrics&) {
          check_nqueens(static_cast<int>(n), run_nqueens(pool, static_cast<int>(n)));
        }));
  s.add("matmul", [](const params& p) -> repetition {
    std::shared_ptr<Pool> pool = make_pool<Pool>(p.threads);
    auto problem = std::make_shared<matmul_problem>(static_cast<std::size_t>(p.n));
    return [pool, problem](rep_timer& timer, metrics&) {
      problem->reset();
      timer.start();
      pc::sync_wait(*pool, matmul(problem->c(), problem->a(), problem->b()));
      timer.stop();
      problem->check();
    };
  });
  s.add("submit", with_poster_frames(submit_workload(make_pool<Pool>)));
  s.add("submit_future", submit_future_workload(make_pool<Pool>));
  s.add("wakeup", wakeup_workload(make_pool<Pool>));
  s.add("vector_fill", vector_fill_workload(make_pool<Pool>, coroutine_blocks{}));
  s.add("memory", memory_workload<Pool>());
}

// POOLS_FRAME_CACHE=off (the `nocache` line of flavours.txt): every coroutine frame from the
// general allocator, to measure what frame_allocator buys. Returns the suffix for the name.
std::string frame_cache_from_environment() {
  const char* value = std::getenv("POOLS_FRAME_CACHE");
  const std::string_view chosen = value == nullptr ? "on" : value;
  if (chosen == "on") return "";
  if (chosen != "off")
    fail_usage(fmt::format("POOLS_FRAME_CACHE='{}' is not a setting; use on or off", chosen));
  pc::frame_allocator::disable_caching();  // before any coroutine has run
  return "/nocache";
}

// POOLS_BENCH_FORK=workfirst or framestack (those lines of flavours.txt): fork/join workloads
// through fork_scope, with task or stack_task. Returns the suffix for the name.
std::string fork_style_from_environment() {
  const char* value = std::getenv("POOLS_BENCH_FORK");
  const std::string_view chosen = value == nullptr ? "helpfirst" : value;
  if (chosen == "helpfirst") return "";
  if (chosen == "workfirst") {
    fork_with = fork_style::work_first;
    return "/workfirst";
  }
  if (chosen != "framestack")
    fail_usage(fmt::format("POOLS_BENCH_FORK='{}' is not a setting; use helpfirst, workfirst or framestack",
                           chosen));
  fork_with = fork_style::frame_stack;
  return "/framestack";
}

}  // namespace

int main(int argc, char** argv) {
  const pool_choice choice = pool_from_environment("coroutines");
  const std::string fork_style = fork_style_from_environment();
  suite s(choice.variant + frame_cache_from_environment() + fork_style);
  if (choice.textbook) {
    add_workloads<pc::textbook_pool>(s);
  } else {
    add_workloads<pc::thread_pool>(s);
  }
  return s.main(argc, argv);
}
