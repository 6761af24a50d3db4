// SPDX-License-Identifier: MIT
// pools/bench/executor_workloads.hpp — workloads that need nothing but pools::Executor.
//
// submit, submit_future, wakeup and vector_fill are written once here against the concept.
// A subject whose natural spelling differs (the futures pool's submit_task, its detach_blocks)
// passes its own operation in; everything else — counts, timing, checks — stays shared.
//
// `make` is a callable `(unsigned threads) -> std::unique_ptr<E>` (or shared_ptr): the executor
// is built in prepare, outside timing, and lives as long as the returned repetition.
#pragma once

#include <pools/bench/harness.hpp>
#include <pools/bench/problems.hpp>
#include <pools/executor.hpp>
#include <pools/parallel_for.hpp>
#include <pools/submit.hpp>
#include <pools/wait_group.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace pools::bench {

namespace detail {
inline double percentile(std::vector<std::int64_t>& samples, double p) {
  const auto k = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
  return static_cast<double>(samples[k]);
}
// How long a lost task may keep the bench waiting before it is reported instead of hanging.
inline constexpr std::chrono::seconds lost_task_timeout{120};
}  // namespace detail

/// submit: an external thread posts n empty tasks, then waits for all. Reports ns_per_task.
template <class Make>
prepare_fn submit_workload(Make make) {
  return [make](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, n = p.n](rep_timer& timer, metrics& out) {
      wait_group wg(n);
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) ex->post([&wg] { wg.done(); });
      const bool all = wg.wait_for(detail::lost_task_timeout);
      timer.stop();
      if (!all) fail_verification(fmt::format("submit: {} of {} tasks never ran", wg.count(), n));
      out["ns_per_task"] = static_cast<double>(timer.elapsed().count()) / static_cast<double>(n);
    };
  };
}

/// submit_future: n submissions each returning a future; all awaited; each value checked.
/// `submit_op(ex, f)` returns a future of f(); the default is pools::submit.
struct generic_submit {
  template <class E, class F>
  auto operator()(E& ex, F&& f) const {
    return pools::submit(ex, std::forward<F>(f));
  }
};

template <class Make, class SubmitOp = generic_submit>
prepare_fn submit_future_workload(Make make, SubmitOp submit_op = {}) {
  return [make, submit_op](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, submit_op, n = p.n](rep_timer& timer, metrics& out) {
      using future_t = decltype(submit_op(*ex, [] { return std::int64_t{}; }));
      std::vector<future_t> futures;
      futures.reserve(static_cast<std::size_t>(n));
      std::int64_t sum = 0;
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) futures.push_back(submit_op(*ex, [i] { return i; }));
      for (auto& f : futures) sum += f.get();
      timer.stop();
      if (sum != n * (n - 1) / 2)
        fail_verification(fmt::format("submit_future: sum {} != {}", sum, n * (n - 1) / 2));
      out["ns_per_task"] = static_cast<double>(timer.elapsed().count()) / static_cast<double>(n);
    };
  };
}

/// wakeup: n samples of the latency from post() on an external thread to the task starting on
/// an idle pool. Between samples the poster sleeps, so workers go idle (spin, then park).
template <class Make>
prepare_fn wakeup_workload(Make make, std::chrono::microseconds idle_gap = std::chrono::microseconds(200)) {
  return [make, idle_gap](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    return [ex, idle_gap, n = p.n](rep_timer& timer, metrics& out) {
      using clock = std::chrono::steady_clock;
      std::vector<std::int64_t> latency(static_cast<std::size_t>(n));
      timer.start();
      for (auto& sample : latency) {
        std::this_thread::sleep_for(idle_gap);
        wait_group wg(1);
        clock::time_point started{};
        const auto posted = clock::now();
        ex->post([&] {
          started = clock::now();
          wg.done();
        });
        if (!wg.wait_for(detail::lost_task_timeout)) fail_verification("wakeup: a posted task never ran");
        sample = std::chrono::duration_cast<std::chrono::nanoseconds>(started - posted).count();
        if (sample < 0) fail_verification("wakeup: task started before it was posted");
      }
      timer.stop();
      out["p50_ns"] = detail::percentile(latency, 0.50);
      out["p99_ns"] = detail::percentile(latency, 0.99);
      out["max_ns"] = static_cast<double>(*std::max_element(latency.begin(), latency.end()));
    };
  };
}

/// vector_fill: the BS::thread_pool paper's test. Fills n vectors single-threaded, then split
/// into T/2, T, 2T and 4T tasks; reports the speedup of each over one thread. The measured time
/// is the run with T tasks. `blocks_op(ex, first, last, f(b, e), blocks)` runs the blocks.
struct generic_blocks {
  template <class E, class F>
  void operator()(E& ex, std::int64_t first, std::int64_t last, F&& f, std::size_t blocks) const {
    pools::parallel_for_blocks(ex, first, last, std::forward<F>(f), blocks);
  }
};

template <class Make, class BlocksOp = generic_blocks>
prepare_fn vector_fill_workload(Make make, BlocksOp blocks_op = {}) {
  return [make, blocks_op](const params& p) -> repetition {
    std::shared_ptr ex{make(p.threads)};
    auto vectors = std::make_shared<std::vector<std::vector<double>>>(static_cast<std::size_t>(p.n));
    for (std::size_t i = 0; i < vectors->size(); ++i) fill_vector((*vectors)[i], i);
    const double expected = vector_fill_checksum(*vectors);
    return [ex, vectors, expected, blocks_op, n = p.n, t = p.threads](rep_timer& timer, metrics& out) {
      using clock = std::chrono::steady_clock;
      auto& vs = *vectors;
      auto fill_range = [&vs](std::int64_t b, std::int64_t e) {
        for (auto i = b; i < e; ++i)
          fill_vector(vs[static_cast<std::size_t>(i)], static_cast<std::size_t>(i));
      };
      auto clear = [&vs] {
        for (auto& v : vs) std::fill(v.begin(), v.end(), 0.0);
      };
      clear();
      const auto s0 = clock::now();
      fill_range(0, n);
      const double serial = std::chrono::duration<double, std::nano>(clock::now() - s0).count();
      out["serial_ns"] = serial;
      const std::size_t tasks[] = {std::max(1u, t / 2), t, 2 * t, 4 * t};
      const char* names[] = {"speedup_tasks_T/2", "speedup_tasks_T", "speedup_tasks_2T", "speedup_tasks_4T"};
      for (std::size_t k = 0; k < 4; ++k) {
        clear();
        const auto t0 = clock::now();
        if (k == 1) timer.start();
        blocks_op(*ex, std::int64_t{0}, n, fill_range, tasks[k]);
        if (k == 1) timer.stop();
        const double took = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
        if (vector_fill_checksum(vs) != expected) {
          fail_verification(fmt::format("vector_fill: checksum differs with {} tasks", tasks[k]));
        }
        out[names[k]] = serial / took;
      }
    };
  };
}

}  // namespace pools::bench
