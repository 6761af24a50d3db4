// SPDX-License-Identifier: MIT
// post_cursor: the per_thread placement policy, fed with synthetic timestamps (deterministic).
#include <doctest/doctest.h>

#include <pools/reactor/post_cursor.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

using pools::reactor::post_cursor;

namespace {
constexpr std::int64_t close_ns = 100;                               // well inside a burst
constexpr std::int64_t pause_ns = post_cursor::burst_gap_ns + 1000;  // ends a burst

// Posts `count` times, `step` ns apart from `t`; returns the chosen contexts and advances t.
std::vector<std::size_t> post_many(post_cursor& c, std::size_t n, std::size_t count, std::int64_t& t,
                                   std::int64_t step = close_ns) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < count; ++i) {
    t += step;
    out.push_back(c.next(n, t));
  }
  return out;
}
}  // namespace

TEST_CASE("post_cursor: the first posts of a burst go one per context") {
  for (std::size_t n : {2u, 3u, 4u, 8u}) {
    post_cursor c;
    std::int64_t t = 1'000'000'000;
    const auto first = post_many(c, n, n, t);
    CHECK(std::set<std::size_t>(first.begin(), first.end()).size() == n);
    for (auto i : first) CHECK(i < n);
  }
}

TEST_CASE("post_cursor: a long burst settles into runs of max_run, visiting every context in turn") {
  constexpr std::size_t n = 3;
  post_cursor c;
  std::int64_t t = 1'000'000'000;
  post_many(c, n, post_cursor::max_run * post_cursor::ramp_step, t);  // the ramp
  const auto steady = post_many(c, n, 20 * post_cursor::max_run, t);
  // Split into runs of equal consecutive values: all full length except possibly the first.
  std::vector<std::size_t> run_lengths;
  std::vector<std::size_t> run_contexts;
  for (std::size_t i = 0; i < steady.size(); ++i) {
    if (i == 0 || steady[i] != steady[i - 1]) {
      run_lengths.push_back(0);
      run_contexts.push_back(steady[i]);
    }
    ++run_lengths.back();
  }
  REQUIRE(run_lengths.size() > 3);
  for (std::size_t r = 1; r + 1 < run_lengths.size(); ++r) CHECK(run_lengths[r] == post_cursor::max_run);
  for (std::size_t r = 1; r < run_contexts.size(); ++r)
    CHECK(run_contexts[r] == (run_contexts[r - 1] + 1) % n);
}

TEST_CASE("post_cursor: the run length ramps up, never down, within a burst") {
  post_cursor c;
  std::int64_t t = 1'000'000'000;
  // Long enough for the ramp (max_run * ramp_step posts) and then a few full runs.
  const auto seq =
      post_many(c, 2, post_cursor::max_run * post_cursor::ramp_step + 3 * post_cursor::max_run, t);
  // Early in the burst the runs are short: the first ramp_step posts strictly alternate.
  for (std::size_t i = 1; i < post_cursor::ramp_step; ++i) CHECK(seq[i] != seq[i - 1]);
  std::vector<std::size_t> runs{1};
  for (std::size_t i = 1; i < seq.size(); ++i) {
    if (seq[i] == seq[i - 1]) {
      ++runs.back();
    } else {
      runs.push_back(1);
    }
  }
  runs.pop_back();  // the last run may be cut short by the end of the sequence
  for (std::size_t r = 1; r < runs.size(); ++r) CHECK(runs[r] >= runs[r - 1]);
  CHECK(runs.back() == post_cursor::max_run);
}

TEST_CASE("post_cursor: a pause starts a new burst, spread one per context again") {
  constexpr std::size_t n = 4;
  post_cursor c;
  std::int64_t t = 1'000'000'000;
  post_many(c, n, 1000, t);  // a long stream: runs of max_run
  const auto after_pause = post_many(c, n, n, t, pause_ns);
  CHECK(std::set<std::size_t>(after_pause.begin(), after_pause.end()).size() == n);
  t += pause_ns;
  const auto fan_out = post_many(c, n, n, t);
  CHECK(std::set<std::size_t>(fan_out.begin(), fan_out.end()).size() == n);
}

TEST_CASE("post_cursor: a stream outlasts pauses shorter than stream_gap_ns, not longer ones") {
  constexpr std::size_t n = 2;
  post_cursor c;
  std::int64_t t = 1'000'000'000;
  post_many(c, n, post_cursor::max_run * post_cursor::ramp_step - 1, t);
  CHECK_FALSE(c.in_stream());  // one post short of the end of the ramp
  post_many(c, n, 1, t);
  REQUIRE(c.in_stream());

  // A pause that would end a burst (a preemption, say) leaves the stream in its run.
  const std::size_t before = post_many(c, n, 1, t).back();
  const auto after_short_pause = post_many(c, n, n, t, post_cursor::stream_gap_ns / 2);
  CHECK(c.in_stream());
  for (auto i : after_short_pause) CHECK(i == before);  // mid-run: max_run is far from used up

  // A pause longer than stream_gap_ns starts a new burst: alternation again, fine clock again.
  post_many(c, n, 1, t, post_cursor::stream_gap_ns + 1000);
  CHECK_FALSE(c.in_stream());
  const auto fan_out = post_many(c, n, n, t);
  CHECK(std::set<std::size_t>(fan_out.begin(), fan_out.end()).size() == n);
}

TEST_CASE("post_cursor: now_ns() is a monotonic clock in ns, fine or coarse") {
  post_cursor c;
  const std::int64_t a = c.now_ns();
  std::int64_t t = 1'000'000'000;
  post_many(c, 2, post_cursor::max_run * post_cursor::ramp_step, t);
  REQUIRE(c.in_stream());  // now_ns() reads the tick clock
  const std::int64_t b = c.now_ns();
  // The tick clock may lag the fine one by one tick (at most 10 ms with HZ=100), never more.
  CHECK(b > a - 10'000'000);
  CHECK(b < a + 60'000'000'000);  // and it is in ns: a minute has not passed
}

TEST_CASE("post_cursor: a cursor used for a larger executor wraps into range for a smaller one") {
  post_cursor c;
  std::int64_t t = 1'000'000'000;
  post_many(c, 8, 7, t);  // cursor now near 7
  for (int i = 0; i < 50; ++i) {
    t += close_ns;
    CHECK(c.next(2, t) < 2);
  }
}
