// SPDX-License-Identifier: MIT
// pools/reactor/post_cursor.hpp — which io_context a thread's next post() goes to (per_thread).
//
// per_thread has N io_contexts, one thread each, and no way to move work between them, so where
// a post lands is the only load balancing there is. Two measured effects pull in opposite
// directions (bench_reactor, 2 threads):
//
//  * Strict alternation (post k to context k mod N) spreads a small fan-out perfectly, but a
//    stream of small tasks from one thread becomes slow: each context gets every N-th task, its
//    thread drains it and goes to sleep before the next one arrives, so every post pays a futex
//    wake-up and every task a sleep/wake cycle — `submit` measured 1.6-2.4x asio::thread_pool.
//  * Long runs of consecutive posts per context keep the woken thread busy (the posts of a run
//    find it awake: no wake-up to pay) — but a fan-out of a few large tasks (parallel_for's T
//    blocks) lands on one context: vector_fill speedup 1.1 instead of 1.9 on 2 threads.
//
// So the run length ramps with the length of the burst: posts from one thread less than
// burst_gap_ns apart form a burst; its first ramp_step posts alternate (run length 1), the next
// ramp_step go in runs of 2, and so on up to max_run. A fan-out of a few tasks is spread one
// per context; a long stream settles into runs of max_run. Tasks posted from inside tasks
// (fork-join) are bursts too, and behave like the stream.
//
// A burst that has reached max_run is a *stream*, and only a pause of stream_gap_ns ends it.
// That is what lets a stream read a cheap clock. The burst test needs a fine clock (50 us), and
// on the post path a fine read costs far more than its 16 ns in a loop. Measured on the Intel VM
// in interleaved rounds (docs/results/history/reactor.md), per_thread `submit` ÷
// asio::thread_pool: fine clock on every post 1.01-1.14; a raw TSC read instead, with or
// without a fence, 0.97-1.00; no clock at all 0.85-0.88. Why a TSC read costs this much here was not found. A
// stream reads the kernel's tick clock instead (CLOCK_MONOTONIC_COARSE: a memory read, one tick = 1-4 ms):
// 0.87-0.95. A pause must span several ticks to be seen, hence 20 ms — also longer than a
// poster is off the CPU when it is merely preempted, so a stream on a busy machine stays one.
// The price: a fan-out within 20 ms of the end of a stream from the same thread lands in a run.
//
// One cursor per posting thread (thread_local in executor::post), not one per executor: a
// shared counter would be a cache line every poster writes on every post.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__linux__) && !defined(POOLS_PORTABLE)  // the coarse clock is Linux's own
#include <time.h>
#else
#include <chrono>
#endif

namespace pools::reactor {

class post_cursor {
 public:
  /// Longest run of consecutive posts to one io_context.
  static constexpr unsigned max_run = 256;
  /// Posts further apart than this start a new burst.
  static constexpr std::int64_t burst_gap_ns = 50'000;
  /// Posts per step of the ramp (run length 1 for the first ramp_step posts of a burst, ...).
  static constexpr unsigned ramp_step = 8;
  /// Once a burst has reached max_run (a stream), only a pause this long ends it.
  static constexpr std::int64_t stream_gap_ns = 20'000'000;

  /// The clock next() is meant to be fed with: fine (CLOCK_MONOTONIC) while a burst ramps up,
  /// the tick clock during a stream. Both count from the same origin, so the first coarse
  /// reading of a stream may lie up to one tick *before* the last fine one: a negative gap,
  /// which ends nothing.
  std::int64_t now_ns() const noexcept {
#if defined(__linux__) && !defined(POOLS_PORTABLE)  // the coarse clock is Linux's own
    timespec ts{};
    clock_gettime(in_stream() ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
#else
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
#endif
  }

  /// The io_context (index < n) for a post made at `now_ns` (any monotonic clock, in ns).
  /// n may differ from call to call (one thread posting to executors of different sizes).
  std::size_t next(std::size_t n, std::int64_t now_ns) noexcept {
    if (now_ns - last_ns_ > (in_stream() ? stream_gap_ns : burst_gap_ns)) burst_ = 0;
    last_ns_ = now_ns;
    const unsigned run = std::min(max_run, 1 + burst_ / ramp_step);
    if (burst_ < max_run * ramp_step) ++burst_;  // saturates: the ramp is over
    if (++in_run_ >= run) {
      in_run_ = 0;
      ++cursor_;
    }
    if (cursor_ >= n) cursor_ = 0;
    return cursor_;
  }

  /// True once the current burst has reached max_run: a pause shorter than stream_gap_ns no
  /// longer ends it.
  bool in_stream() const noexcept { return burst_ == max_run * ramp_step; }

 private:
  std::size_t cursor_ = 0;
  unsigned in_run_ = 0;
  unsigned burst_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace pools::reactor
