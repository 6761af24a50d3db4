// SPDX-License-Identifier: MIT
// pools/bench/harness.hpp — the one benchmark command line shared by every bench_<name>.
//
//   bench_<name> --workload <w> [--n N] [--threads T] [--reps R] [--warmup W] [--json FILE] [--trace FILE]
//   bench_<name> --list | --help
//
// A bench executable builds a `suite`, registers the workloads it can express in its own
// spelling, declares the others unsupported with a reason, and returns suite.main(argc, argv).
// The set of workload names, their meaning, defaults and argument checks live in the harness
// (workloads.cpp), so every variant and reference measures the same thing.
//
// Timing: each repetition is a call of the registered `repetition`. By default the harness times
// the whole call; a repetition that needs untimed setup or verification calls timer.start() and
// timer.stop() around the measured part. Warm-up repetitions run first and are discarded.
// A repetition verifies its own result and calls fail_verification() on a wrong one: the run
// stops with exit code 1 and the message — a wrong answer is never reported as a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pools::bench {

/// The parameters of one run, after defaults and checks.
struct params {
  std::int64_t n = 0;    // problem size; its meaning depends on the workload (see --list)
  unsigned threads = 0;  // worker threads the executor under test must use
};

/// Lets a repetition exclude setup and verification from its measured time.
class rep_timer {
 public:
  void start() { start_ = clock::now(); }
  void stop() {
    elapsed_ += clock::now() - start_;
    used_ = true;
  }
  bool used() const { return used_; }
  std::chrono::nanoseconds elapsed() const { return elapsed_; }

 private:
  using clock = std::chrono::steady_clock;
  clock::time_point start_{};
  std::chrono::nanoseconds elapsed_{0};
  bool used_ = false;
};

/// Extra numbers one repetition reports (ns_per_task, p99_ns, speedup_at_4T ...). The harness
/// reports the median of each over the measured repetitions.
using metrics = std::map<std::string, double>;

/// One repetition: runs the workload once, verifies the result, may fill `out`.
using repetition = std::function<void(rep_timer& timer, metrics& out)>;

/// Builds the state of a run (the executor, inputs) once, outside any timing, and returns the
/// repetition to call. Whatever the returned function captures lives until the run ends.
using prepare_fn = std::function<repetition(const params&)>;

/// Stops the run: prints "verification failed: <what>" and exits with code 1.
[[noreturn]] void fail_verification(const std::string& what);

/// Exits with code 2 and a message naming the bad argument (for variant-specific checks).
[[noreturn]] void fail_usage(const std::string& what);

/// The process's resident set size now, in bytes (from /proc/self/statm). The memory workload
/// reports the growth between two readings divided by the number of suspended tasks.
std::int64_t current_rss_bytes();

/// Defeats dead-code elimination of a computed value without costing a store.
template <class T>
inline void keep(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

/// Which of a variant's two pools a bench_<variant> measures. Every variant has a tuned pool (its
/// main executor) and a textbook pool (`textbook_pool.hpp`: the idea in one sitting). The harness
/// command line is shared by every subject, so the choice comes from the environment:
/// POOLS_BENCH_POOL unset or "tuned" measures the tuned pool and the record's variant is
/// `variant`; "textbook" measures the textbook pool as "<variant>/textbook" (the line
/// `textbook POOLS_BENCH_POOL=textbook` of the variant's bench/flavours.txt makes it a subject of
/// compare.py). Any other value is a usage error (exit 2).
struct pool_choice {
  bool textbook = false;
  std::string variant;  // the name the records carry
};
pool_choice pool_from_environment(std::string_view variant);

/// The workloads every bench executable knows by name (see bench/README.md for each).
struct workload_info {
  std::string_view name;
  std::string_view summary;
  std::string_view n_meaning;
  std::int64_t default_n;
};
const std::vector<workload_info>& workload_catalogue();

class suite {
 public:
  /// `variant` names the executable's subject: "futures", "tbb", ... (printed and in JSON).
  explicit suite(std::string variant);

  /// Registers the implementation of a catalogued workload. Unknown names are a programming
  /// error and abort at start-up.
  suite& add(std::string_view workload, prepare_fn prepare);

  /// Declares a catalogued workload that this subject cannot express honestly, and why.
  /// Running it prints "not supported: <reason>" and exits 0; JSON gets supported=false.
  suite& unsupported(std::string_view workload, std::string reason);

  /// Parses the command line, runs, prints; returns the process exit code.
  int main(int argc, char** argv);

 private:
  std::string variant_;
  std::map<std::string, prepare_fn, std::less<>> implemented_;
  std::map<std::string, std::string, std::less<>> unsupported_;
};

}  // namespace pools::bench
