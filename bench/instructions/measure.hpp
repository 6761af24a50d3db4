// SPDX-License-Identifier: MIT
// bench/instructions/measure.hpp — what every instruction-count driver (instr_<variant>) shares.
//
// A driver runs one hot path of one tuned pool n times and lets callgrind count the instructions
// (bench/instructions.py runs it twice, with n1 and n2 operations, and divides the difference by
// n2 - n1, which cancels everything done once). Counts must not depend on timing, so:
//  * the pool has ONE worker thread, and every counted operation runs on it (posted from a task,
//    forked inside a task): no other thread touches the pool while counting is on, so no lock is
//    contended, no worker parks, no wake-up is sent and no loop spins for an unknown time;
//  * counting is switched on and off on that worker thread with callgrind's client request
//    (collect_toggle; instructions.py runs valgrind with --collect-atstart=no), so start-up, the
//    main thread's wait and shut-down are not counted at all;
//  * operations go in batches of `batch` at a time, so a queue never grows beyond one batch: a
//    longer run repeats the same steps, it does not reach a larger queue capacity.
// Outside valgrind the client request is a few no-op instructions: the drivers also run natively
// (ctest perf_guard_drivers_smoke) and check their results.
//
//   instr_<variant> <path> <n>     run <path> n times; exit 0, or 1 on a wrong result
//   instr_<variant> --list         the paths, one per line: "<path> <operations per n>"
#pragma once

#include <valgrind/callgrind.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <map>
#include <string>
#include <string_view>

namespace pools::bench::instructions {

/// Switches callgrind's counting on (or off) for the calling thread.
inline void collect_toggle() {
  CALLGRIND_TOGGLE_COLLECT;
}

/// A result the compiler cannot drop: the drivers' leaves return it through a call it cannot see.
[[gnu::noinline]] inline std::int64_t one() {
  asm volatile("");  // not a pure function: each call happens
  return 1;
}

/// Posted tasks in flight at most: small enough for every queue's first segment or array.
inline constexpr std::int64_t batch = 32;

[[noreturn]] inline void wrong(const std::string& what) {
  std::fprintf(stderr, "instructions driver: wrong result: %s\n", what.c_str());
  std::exit(1);
}

/// post and run: n empty tasks posted from a task of `pool` (one worker) and run by it, `batch`
/// at a time. The task that completes a batch posts the next one, so this works whatever order
/// the pool runs its queue in (FIFO, or LIFO for a worker's own deque). Counting is on from the
/// first post to the end of the last task. The counters are plain: one thread touches them, and
/// the main thread reads nothing until `finished` (set_value synchronises with the wait) says it
/// may.
template <class Pool>
void post_and_run(Pool& pool, std::int64_t n) {
  struct chain {
    chain(Pool& p, std::int64_t count) : pool(p), n(count) {}
    Pool& pool;
    std::int64_t n;
    std::int64_t posted = 0;
    std::int64_t ran = 0;
    std::promise<void> finished;  // a promise, not a latch: the shared state outlives `chain`
    void post_batch() {
      const std::int64_t last = posted + batch < n ? posted + batch : n;
      for (; posted < last; ++posted) pool.post([this] { run_one(); });
    }
    void run_one() {
      ran += one();
      if (ran == n) {
        collect_toggle();  // off: the last task has run
        finished.set_value();
      } else if (ran % batch == 0) {
        post_batch();
      }
    }
  };
  chain c{pool, n};
  std::future<void> done = c.finished.get_future();  // before any task can set it
  pool.post([&c] {
    collect_toggle();  // on, on the worker thread
    c.post_batch();
  });
  done.wait();
  if (c.ran != n || c.posted != n)
    wrong("post_and_run ran " + std::to_string(c.ran) + " of " + std::to_string(n));
}

/// A path: its function of n, and how many operations one n stands for (a yield round trip is
/// two switches).
struct path {
  std::function<void(std::int64_t)> run;
  int ops_per_n = 1;
};

/// The drivers' main(): parses the command line (above), runs the path.
inline int main_for(int argc, char** argv, const std::map<std::string, path>& paths) {
  const std::string_view usage = "usage: instr_<variant> <path> <n> | --list";
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const auto& [name, p] : paths) std::printf("%s %d\n", name.c_str(), p.ops_per_n);
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(usage.size()), usage.data());
    return 2;
  }
  const auto it = paths.find(argv[1]);
  if (it == paths.end()) {
    std::fprintf(stderr, "unknown path '%s' (--list shows the paths)\n", argv[1]);
    return 2;
  }
  std::int64_t n = 0;
  const std::string_view text(argv[2]);
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (err != std::errc{} || end != text.data() + text.size() || n < 1) {
    std::fprintf(stderr, "n must be a positive integer, got '%s'\n", argv[2]);
    return 2;
  }
  it->second.run(n);
  return 0;
}

}  // namespace pools::bench::instructions
