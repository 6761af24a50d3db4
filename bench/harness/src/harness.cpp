// SPDX-License-Identifier: MIT
// The runner behind every bench_<name>: parse, look up, warm up, repeat, summarise, print.
#include <pools/bench/harness.hpp>
#include <pools/trace.hpp>
#include <pools/trace_export.hpp>

#include <boost/accumulators/accumulators.hpp>
#include <boost/accumulators/statistics/max.hpp>
#include <boost/accumulators/statistics/mean.hpp>
#include <boost/accumulators/statistics/min.hpp>
#include <boost/accumulators/statistics/stats.hpp>
#include <boost/accumulators/statistics/variance.hpp>
#include <boost/program_options.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#ifndef POOLS_BENCH_FLAGS
#define POOLS_BENCH_FLAGS "unknown"
#endif

namespace pools::bench {

std::string check_n(std::string_view workload, std::int64_t n);  // workloads.cpp

namespace po = boost::program_options;
namespace acc = boost::accumulators;

void fail_verification(const std::string& what) {
  std::fflush(stdout);
  fmt::print(stderr, "verification failed: {}\n", what);
  std::exit(1);
}

void fail_usage(const std::string& what) {
  std::fflush(stdout);
  fmt::print(stderr, "error: {}\n(run with --help for usage)\n", what);
  std::exit(2);
}

pool_choice pool_from_environment(std::string_view variant) {
  const char* value = std::getenv("POOLS_BENCH_POOL");
  const std::string_view chosen = value == nullptr ? "tuned" : value;
  if (chosen == "tuned") return {false, std::string(variant)};
  if (chosen == "textbook") return {true, fmt::format("{}/textbook", variant)};
  fail_usage(fmt::format("POOLS_BENCH_POOL='{}' is not a pool; use tuned or textbook", chosen));
}

namespace {

std::string compiler_id() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

std::int64_t current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

namespace {

// The peak resident set of this program: VmHWM, the high-water mark of the address space the
// exec made. Not getrusage's ru_maxrss: Linux carries that across execve, so a bench started by a
// Python script (fork, then exec) would report at least the script's own peak.
long max_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);  // "VmHWM:  4116 kB"
  }
  rusage usage{};  // no /proc: the process's peak, which may include its parent's
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // Linux reports KiB
}

// The context switches of every thread of this process so far (getrusage(RUSAGE_SELF) sums them
// over the threads, the exited ones too). Voluntary: a thread blocked (a futex wait, a sleep, a
// read with nothing to read) and gave up its CPU; involuntary: the kernel took the CPU away (its
// time slice ended, or a woken thread preempted it) or the thread gave it up while still
// runnable (sched_yield). Taken around each repetition, they say whether a pool's time went to
// sleeping and waking: the cost that oversubscription multiplies.
struct switch_counts {
  long voluntary = 0, involuntary = 0;
};

switch_counts context_switches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return {usage.ru_nvcsw, usage.ru_nivcsw};
}

struct summary {
  double median = 0, min = 0, max = 0, mean = 0, stddev = 0;
};

summary summarise(std::vector<double> samples) {
  acc::accumulator_set<double, acc::stats<acc::tag::min, acc::tag::max, acc::tag::mean, acc::tag::variance>>
      a;
  for (double s : samples) a(s);
  std::sort(samples.begin(), samples.end());
  const std::size_t m = samples.size() / 2;
  summary out;
  out.median = samples.size() % 2 == 1 ? samples[m] : (samples[m - 1] + samples[m]) / 2;
  out.min = acc::min(a);
  out.max = acc::max(a);
  out.mean = acc::mean(a);
  // Sample standard deviation (n - 1): the repetitions are a sample of the machine's behaviour.
  const double n = static_cast<double>(samples.size());
  out.stddev = samples.size() > 1 ? std::sqrt(acc::variance(a) * n / (n - 1)) : 0.0;
  return out;
}

std::string human_ns(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

const workload_info* find_workload(std::string_view name) {
  for (const auto& w : workload_catalogue()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

void write_json(const std::string& path, const nlohmann::json& record) {
  std::ofstream out(path);
  if (!out) fail_usage(fmt::format("cannot write --json file '{}'", path));
  out << nlohmann::json::array({record}).dump(2) << '\n';
  if (!out) fail_usage(fmt::format("writing --json file '{}' failed", path));
}

}  // namespace

namespace {

/// --trace: stops the executor (its threads stop writing their rings), writes the file, prints
/// the summary.
[[maybe_unused]] void write_trace(const std::string& path, repetition& rep) {
  rep = nullptr;  // destroys what the repetition captured: the executor, which joins its threads
  try {
    const auto traced = pools::trace::write_chrome_json(path);
    pools::trace::print_summary(traced, stdout);
    fmt::print("trace written to {} (open it in https://ui.perfetto.dev)\n", path);
  } catch (const std::exception& e) {
    fail_usage(e.what());
  }
}

}  // namespace

suite::suite(std::string variant) : variant_(std::move(variant)) {}

suite& suite::add(std::string_view workload, prepare_fn prepare) {
  if (find_workload(workload) == nullptr) {
    fmt::print(stderr, "bench_{}: internal error: '{}' is not a catalogued workload\n", variant_, workload);
    std::abort();
  }
  implemented_.insert_or_assign(std::string(workload), std::move(prepare));
  return *this;
}

suite& suite::unsupported(std::string_view workload, std::string reason) {
  if (find_workload(workload) == nullptr) {
    fmt::print(stderr, "bench_{}: internal error: '{}' is not a catalogued workload\n", variant_, workload);
    std::abort();
  }
  unsupported_.insert_or_assign(std::string(workload), std::move(reason));
  return *this;
}

int suite::main(int argc, char** argv) {
  const std::string program = "bench_" + variant_;
  po::options_description options(fmt::format(
      "Usage: {} --workload <w> [--n N] [--threads T] [--reps R] [--warmup W] [--json FILE] [--trace FILE]\n"
      "       {} --list\n\nOptions",
      program, program));
  options.add_options()("help,h", "print this help")(
      "list", "list the workloads and whether this executable supports them")(
      "workload,w", po::value<std::string>(), "workload to run (see --list)")(
      "n", po::value<std::int64_t>(), "problem size (default: the workload's; see --list)")(
      "threads,t", po::value<unsigned>()->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "worker threads")("reps,r", po::value<unsigned>()->default_value(5), "measured repetitions (1..1000)")(
      "warmup", po::value<unsigned>()->default_value(1), "discarded warm-up repetitions (0..100)")(
      "json", po::value<std::string>(), "also write the result as a JSON array to FILE")(
      "trace", po::value<std::string>(),
      "write the scheduler's events of the last repetition to FILE (Chrome Trace Event JSON, for Perfetto) "
      "and print a summary; needs a build configured with -DPOOLS_TRACE=ON");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    fail_usage(e.what());
  }
  if (vm.count("help")) {
    std::cout << options << '\n';
    return 0;
  }
  if (vm.count("list")) {
    for (const auto& w : workload_catalogue()) {
      const auto u = unsupported_.find(w.name);
      const std::string state = implemented_.count(w.name) ? "yes"
                                : u != unsupported_.end()  ? "not supported: " + u->second
                                                           : "not supported";
      fmt::print("{:<14} {}\n{:<14}   {} (default {})\n{:<14}   {}\n", w.name, w.summary, "", w.n_meaning,
                 w.default_n, "", state);
    }
    return 0;
  }
  if (!vm.count("workload")) fail_usage("--workload is required (or --list / --help)");
  const std::string name = vm["workload"].as<std::string>();
  const workload_info* info = find_workload(name);
  if (info == nullptr) {
    std::string names;
    for (const auto& w : workload_catalogue()) names += (names.empty() ? "" : ", ") + std::string(w.name);
    fail_usage(fmt::format("unknown workload '{}'; known: {}", name, names));
  }

  params p;
  p.n = vm.count("n") ? vm["n"].as<std::int64_t>() : info->default_n;
  p.threads = vm["threads"].as<unsigned>();
  const unsigned reps = vm["reps"].as<unsigned>();
  const unsigned warmup = vm["warmup"].as<unsigned>();
  if (p.threads < 1 || p.threads > 1024)
    fail_usage(fmt::format("--threads {} is out of range 1..1024", p.threads));
  if (reps < 1 || reps > 1000) fail_usage(fmt::format("--reps {} is out of range 1..1000", reps));
  if (warmup > 100) fail_usage(fmt::format("--warmup {} is out of range 0..100", warmup));
  if (auto problem = check_n(name, p.n); !problem.empty()) fail_usage(problem);
  const std::string trace_path = vm.count("trace") ? vm["trace"].as<std::string>() : std::string();
  if (vm.count("trace") && !pools::trace::compiled_in)
    fail_usage(std::string(pools::trace::not_compiled_message));
  if (vm.count("trace") && trace_path.empty()) fail_usage("--trace needs a file name");

  nlohmann::json record{{"workload", name},           {"params", {{"n", p.n}}}, {"variant", variant_},
                        {"threads", p.threads},       {"reps", reps},           {"compiler", compiler_id()},
                        {"flags", POOLS_BENCH_FLAGS}, {"cpu", cpu_model()}};

  const auto impl = implemented_.find(name);
  if (impl == implemented_.end()) {
    const auto u = unsupported_.find(name);
    const std::string reason = u != unsupported_.end() ? u->second : "no implementation registered";
    fmt::print("{} {}: not supported: {}\n", program, name, reason);
    record["supported"] = false;
    record["reason"] = reason;
    if (vm.count("json")) write_json(vm["json"].as<std::string>(), record);
    return 0;
  }

  POOLS_TRACE_THREAD("bench main thread");
  repetition rep = impl->second(p);
  std::vector<double> times;
  std::vector<double> voluntary_switches, involuntary_switches;
  std::map<std::string, std::vector<double>> metric_samples;
  for (unsigned i = 0; i < warmup + reps; ++i) {
    rep_timer timer;
    metrics m;
    // The trace shows the last repetition. (if constexpr: without POOLS_TRACE no trace code is linked.)
    if constexpr (pools::trace::compiled_in) {
      if (i + 1 == warmup + reps) pools::trace::mark();
    }
    const switch_counts before = context_switches();
    const auto t0 = std::chrono::steady_clock::now();
    rep(timer, m);
    const auto whole = std::chrono::steady_clock::now() - t0;
    const switch_counts after = context_switches();
    if (i < warmup) continue;
    times.push_back(static_cast<double>((timer.used() ? timer.elapsed() : whole).count()));
    voluntary_switches.push_back(static_cast<double>(after.voluntary - before.voluntary));
    involuntary_switches.push_back(static_cast<double>(after.involuntary - before.involuntary));
    for (const auto& [k, v] : m) metric_samples[k].push_back(v);
  }
  const summary s = summarise(times);
  const long rss = max_rss_kib();

  record["supported"] = true;
  record["median_ns"] = s.median;
  record["min_ns"] = s.min;
  record["max_ns"] = s.max;
  record["mean_ns"] = s.mean;
  record["stddev_ns"] = s.stddev;
  record["max_rss_kib"] = rss;
  const double voluntary = summarise(voluntary_switches).median;
  const double involuntary = summarise(involuntary_switches).median;
  record["context_switches"] = {{"voluntary", voluntary}, {"involuntary", involuntary}};
  nlohmann::json extra = nlohmann::json::object();
  for (auto& [k, v] : metric_samples) extra[k] = summarise(v).median;
  record["metrics"] = extra;

  fmt::print(
      "{:<12} {:<14} {:>10} {:>3}t {:>3}r  median {:>10}  min {:>10}  max {:>10}  sd {:>5.1f}%  rss {:>7} "
      "KiB\n",
      variant_, name, p.n, p.threads, reps, human_ns(s.median), human_ns(s.min), human_ns(s.max),
      s.mean > 0 ? 100.0 * s.stddev / s.mean : 0.0, rss);
  for (const auto& [k, v] : extra.items())
    fmt::print("{:<12} {:<14}   {} = {:.4g}\n", "", "", k, v.get<double>());
  fmt::print("{:<12} {:<14}   context switches a repetition: {:.0f} voluntary, {:.0f} involuntary\n", "", "",
             voluntary, involuntary);
  if (vm.count("json")) write_json(vm["json"].as<std::string>(), record);
  if constexpr (pools::trace::compiled_in) {
    if (!trace_path.empty()) write_trace(trace_path, rep);
  }
  return 0;
}

}  // namespace pools::bench
