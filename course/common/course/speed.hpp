// SPDX-License-Identifier: MIT
// course/speed.hpp — how the speed tests of the course are graded (exercises 01 and 03): your pool
// against the reference pool, measured in the same run, the way CS149 grades its task systems.
//
//   course::speed_rule rule{1.2, 2.0};                 // full points within 1.2x, none from 2.0x
//   course::speed_result r = course::compare_speed(rule, [&] { run(reference); }, [&] { run(yours); });
//   report.partial(r.fraction, r.describe("fib(20) on 2 threads"));
//
// Other work on the machine slows both pools alike only if they are measured side by side, so the runs
// alternate (reference, yours, yours, reference, ...: each one's position evens out) and each side
// scores its median of `samples` runs, which one slow run (a preemption) does not move. If the ratio
// is above full marks, the round is repeated up to `rounds` times and the best round counts: noise
// only ever makes a pool look slower. A round in which a pool is far beyond the cut-off stops after
// three runs of each (that round gives it 0 points whatever the rest says), so a slow pool does not
// make the grading slow.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace course {

struct speed_rule {
  double full_within = 1.2;  // yours / reference at or below this: full points
  double zero_at = 2.0;      // at or above this: none; linear in between
  int samples = 7;           // runs of each pool per round, interleaved; the median counts
  int rounds = 7;            // rounds at most, while the ratio is above full_within
};

struct speed_result {
  double reference_ms = 0;
  double yours_ms = 0;
  double ratio = 0;     // yours_ms / reference_ms
  double fraction = 0;  // the share of the test's points: rule applied to ratio
  int rounds = 0;

  /// One line for the report: the workload, both medians, the ratio and the rule.
  std::string describe(const std::string& workload, const speed_rule& rule) const {
    char line[400];
    std::snprintf(
        line, sizeof line,
        "%s: medians of interleaved runs (%d of each per round, best of %d round(s)): reference %.2f ms, "
        "yours %.2f ms = "
        "%.2fx the reference (full points within %.2fx, none from %.2fx): %.0f %% of the points",
        workload.c_str(), rule.samples, rounds, reference_ms, yours_ms, ratio, rule.full_within, rule.zero_at,
        fraction * 100);
    return line;
  }
};

inline double speed_fraction(double ratio, const speed_rule& rule) {
  if (ratio <= rule.full_within) return 1;
  if (ratio >= rule.zero_at) return 0;
  return (rule.zero_at - ratio) / (rule.zero_at - rule.full_within);
}

namespace detail {
template <class Run>
double time_ms(Run& run) {
  const auto begin = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace detail

/// Times `reference` and `yours` (each one whole workload per call) as the file comment says.
/// Each is called once first, untimed (threads started, allocator warm).
template <class Reference, class Yours>
speed_result compare_speed(const speed_rule& rule, Reference reference, Yours yours) {
  reference();
  yours();
  speed_result best;
  for (int round = 0; round < rule.rounds; ++round) {
    std::vector<double> ref, mine;
    bool hopeless = false;
    for (int i = 0; i < rule.samples && !hopeless; ++i) {
      if (i % 2 == 0) {
        ref.push_back(detail::time_ms(reference));
        mine.push_back(detail::time_ms(yours));
      } else {
        mine.push_back(detail::time_ms(yours));
        ref.push_back(detail::time_ms(reference));
      }
      // Three pairs in, twice the cut-off: this round cannot give it points.
      hopeless = i >= 2 && detail::median(mine) > 2 * rule.zero_at * detail::median(ref);
    }
    speed_result r;
    r.reference_ms = detail::median(ref);
    r.yours_ms = detail::median(mine);
    r.ratio = r.yours_ms / (r.reference_ms > 0 ? r.reference_ms : 1e-9);
    r.fraction = speed_fraction(r.ratio, rule);
    r.rounds = round + 1;
    if (round == 0 || r.ratio < best.ratio) best = r;
    best.rounds = round + 1;
    if (best.ratio <= rule.full_within) break;
  }
  return best;
}

}  // namespace course
