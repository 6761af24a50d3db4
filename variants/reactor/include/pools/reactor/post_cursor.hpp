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
//    find it awake: no wake-up to pay) — `submit` 0.92-0.95x asio::thread_pool with runs of
//    256, 1.10-1.19x with runs of 16 (Intel VM, 2026-11-23; later interleaved rounds the same day
//    put runs of 256 at 1.04-1.07x, see README.md "Numbers") — but a fan-out of a few large tasks
//    (parallel_for's T blocks) lands on one context: vector_fill speedup 1.1 instead of 1.9 on
//    2 threads.
//
// So the run length ramps with the length of the burst: posts from one thread less than
// burst_gap_ns apart form a burst; its first ramp_step posts alternate (run length 1), the next
// ramp_step go in runs of 2, and so on up to max_run. A fan-out of a few tasks is spread one
// per context; a long stream settles into runs of max_run. Tasks posted from inside tasks
// (fork-join) are bursts too, and behave like the stream.
//
// One cursor per posting thread (thread_local in executor::post), not one per executor: a
// shared counter would be a cache line every poster writes on every post. The clock is read
// once per post (steady_clock, a vDSO call of some 20 ns).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace pools::reactor {

class post_cursor {
 public:
  /// Longest run of consecutive posts to one io_context.
  static constexpr unsigned max_run = 256;
  /// Posts further apart than this start a new burst.
  static constexpr std::int64_t burst_gap_ns = 50'000;
  /// Posts per step of the ramp (run length 1 for the first ramp_step posts of a burst, ...).
  static constexpr unsigned ramp_step = 8;

  /// The io_context (index < n) for a post made at `now_ns` (any monotonic clock, in ns).
  /// n may differ from call to call (one thread posting to executors of different sizes).
  std::size_t next(std::size_t n, std::int64_t now_ns) noexcept {
    if (now_ns - last_ns_ > burst_gap_ns) burst_ = 0;
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

 private:
  std::size_t cursor_ = 0;
  unsigned in_run_ = 0;
  unsigned burst_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace pools::reactor
