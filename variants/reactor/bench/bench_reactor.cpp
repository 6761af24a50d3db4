// SPDX-License-Identifier: MIT
// bench_reactor — the callback reactor: the tuned one under either strategy, or the textbook pool.
//
//   POOLS_REACTOR_STRATEGY=per_thread|shared bench_reactor --workload fib ...
//   POOLS_BENCH_POOL=textbook bench_reactor --workload fib ...
//
// The harness command line is shared by every subject, so the choices come from the environment.
// Unset, the tuned reactor runs the per_thread strategy and the record's variant is "reactor"
// (what the build registered); a strategy set by name makes it "reactor/<strategy>", and the
// textbook pool (pools/reactor/textbook_pool.hpp, which has no strategies) is "reactor/textbook",
// so two runs never mix up.
// Fork-join is continuation-passing (pools/bench/cps_workloads.hpp): a reactor handler must not
// block on its children, it leaves a join counter and the last child continues. "memory" is n
// pending timers, the reactor's notion of a suspended task.
#include <pools/bench/asio_workloads.hpp>
#include <pools/bench/cps_workloads.hpp>
#include <pools/bench/executor_workloads.hpp>
#include <pools/bench/harness.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/wait_group.hpp>

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace {
using namespace pools::bench;
using pools::reactor::strategy;
using pools::reactor::textbook_pool;

struct choice {
  strategy chosen = strategy::per_thread;
  std::string variant = "reactor";
};

choice strategy_from_environment() {
  const char* value = std::getenv("POOLS_REACTOR_STRATEGY");
  if (value == nullptr) return {};
  const auto parsed = pools::reactor::parse_strategy(value);
  if (!parsed) {
    fail_usage(fmt::format("POOLS_REACTOR_STRATEGY='{}' is not a strategy; use per_thread or shared", value));
  }
  return {*parsed, "reactor/" + std::string(pools::reactor::to_string(*parsed))};
}

// Counts its own destruction (not a moved-from copy's): the proof that a timer was dropped.
class drop_counter {
 public:
  explicit drop_counter(std::atomic<std::int64_t>& count) : count_(&count) {}
  drop_counter(drop_counter&& other) noexcept : count_(std::exchange(other.count_, nullptr)) {}
  drop_counter& operator=(drop_counter&&) = delete;
  ~drop_counter() {
    if (count_ != nullptr) count_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::int64_t>* count_;
};

// memory for the textbook pool: n timers due in an hour, pending at once. The pool cannot cancel
// a timer, and its destructor destroys the timers that are not yet due (textbook_pool.hpp), so
// each repetition builds its own pool (before the first RSS reading: only the timers count) and
// ends by destroying it — then every timer must have been destroyed, and none run. post_after
// hands a timer to its loop as a task; RSS is read once every loop has filed its timers (a task
// posted to each loop behind them has run), so the growth includes what the burst of hand-overs
// left behind (the queue's capacity), as it would in a program.
prepare_fn textbook_timer_memory_workload() {
  return [](const params& p) -> repetition {
    return [threads = p.threads, n = p.n](rep_timer& timer, metrics& out) {
      std::atomic<std::int64_t> ran{0};
      std::atomic<std::int64_t> dropped{0};
      auto pool = std::make_unique<textbook_pool>(threads);
      const auto before = current_rss_bytes();
      timer.start();
      for (std::int64_t i = 0; i < n; ++i) {
        pool->post_after(std::chrono::hours(1), [&ran, token = drop_counter(dropped)] { ran.fetch_add(1); });
      }
      timer.stop();
      pools::wait_group filed(threads);  // n consecutive posts reach all n loops (round-robin)
      for (unsigned i = 0; i < threads; ++i) pool->post([&filed] { filed.done(); });
      if (!filed.wait_for(std::chrono::seconds(120))) fail_verification("memory: a loop never caught up");
      const auto after = current_rss_bytes();
      pool.reset();
      if (ran.load() != 0 || dropped.load() != n) {
        fail_verification(fmt::format("memory: of {} timers {} ran early and {} were dropped", n, ran.load(),
                                      dropped.load()));
      }
      out["bytes_per_task"] = static_cast<double>(after - before) / static_cast<double>(n);
      out["rss_growth_kib"] = static_cast<double>(after - before) / 1024.0;
    };
  };
}

int run_textbook(const pool_choice& pool, int argc, char** argv) {
  if (std::getenv("POOLS_REACTOR_STRATEGY") != nullptr) {
    fail_usage(
        "POOLS_REACTOR_STRATEGY chooses a strategy of the tuned reactor; the textbook pool has none "
        "(unset it, or unset POOLS_BENCH_POOL)");
  }
  suite s(pool.variant);
  cps::add_post_only_workloads(s, [](unsigned threads) { return std::make_unique<textbook_pool>(threads); });
  s.add("memory", textbook_timer_memory_workload());
  return s.main(argc, argv);
}

int run_tuned(int argc, char** argv) {
  const choice c = strategy_from_environment();
  auto make = [chosen = c.chosen](unsigned threads) {
    return std::make_unique<pools::reactor::executor>(threads, chosen);
  };
  suite s(c.variant);
  cps::add_post_only_workloads(s, make);
  // Timers spread over the io_contexts as connections would be: round-robin under per_thread.
  s.add("memory", asio_timer_memory_workload(make, [](pools::reactor::executor& ex, std::size_t i) {
          return ex.context(i % ex.context_count()).get_executor();
        }));
  return s.main(argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  const pool_choice pool = pool_from_environment("reactor");
  return pool.textbook ? run_textbook(pool, argc, argv) : run_tuned(argc, argv);
}
