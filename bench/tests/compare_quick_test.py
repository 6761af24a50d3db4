#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs bench/compare.py --quick on two cheap subjects and checks what a new user sees.

Usage: compare_quick_test.py BUILD_DIR OUT_DIR
- progress: with stdout not a terminal (as here, a pipe) every run is announced on a plain line
  "[k/N] <subject> × <workload>", k counting up to N, the planned total;
- quick: one repetition per run, a slow reference's per-task runs in the first round only; the runs
  left out of a quick run (naive's fork-join) are
  recorded as skipped with the reason, shown as "skip" in the summary, and results.md says it is
  a quick run;
- fork-join in rounds (when oneTBB is built): fib runs in 2 rounds at the quick size, with oneTBB
  run a second time as tbb/again, its noise floor, in results.json and in results.md.
"""
import json
import os
import re
import subprocess
import sys

from checks import expect, verdict

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    build, out = sys.argv[1], sys.argv[2]
    tbb = os.path.exists(os.path.join(build, "bench", "bench_tbb"))  # optional (the handout preset has none)
    cmd = [sys.executable, os.path.join(HERE, "..", "compare.py"), "--build", build, "--out", out, "--quick",
           "--threads", "2", "--rounds", "2", "--timeout", "120",
           "--subjects", "naive,asio_pool" + (",tbb" if tbb else ""), "--workloads", "fib,wakeup"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    expect(p.returncode == 0, f"compare.py --quick exits 0 (got {p.returncode}: {p.stderr.strip()[-300:]})")

    steps = re.findall(r"^\[(\d+)/(\d+)\] (\S+) × (\S+)", p.stdout, re.M)
    # fib, 2 rounds: naive (skipped, not announced) and asio_pool, and with oneTBB tbb and tbb/again;
    # wakeup: naive (a slow reference: the first round only), then 2 rounds of asio_pool and
    # asio_pool/again (and tbb). The total counts the skipped too.
    announced, total = (13, 16) if tbb else (7, 10)
    expect(len(steps) == announced, f"{announced} runs announced on plain lines (got {len(steps)})")
    expect(all(int(t) == total for _, t, _, _ in steps), f"each line names the planned total, {total} runs")
    expect([int(k) for k, _, _, _ in steps] == sorted(int(k) for k, _, _, _ in steps),
           "the count only goes up")
    expect("\r" not in p.stdout, "no progress-bar redraws in a log")

    data = json.load(open(os.path.join(out, "results.json")))
    by = {(r["variant"], r["workload"]): r for r in data["records"]}
    expect(data.get("quick") is True and data.get("reps") == 1, "results.json: quick, one repetition")
    naive_fib = by.get(("naive", "fib"), {})
    expect(naive_fib.get("skipped") is True and "--full" in naive_fib.get("reason", ""),
           "naive × fib is recorded as skipped, pointing at --full")
    expect(by.get(("asio_pool", "fib"), {}).get("reps") == 1, "asio_pool × fib ran one repetition")
    expect(by.get(("asio_pool", "fib"), {}).get("params", {}).get("n") == 27, "fib at the quick size, 27")
    if tbb:
        again = by.get(("tbb/again", "fib"), {})
        expect(len(again.get("round_values", [])) == 2 and len(again.get("round_ratios", [])) == 2,
               "fib's noise floor: tbb/again in 2 rounds, with its ratio to tbb round by round")
        expect("bench_tbb " in again.get("command", ""), "tbb/again ran oneTBB's binary")
        expect(len(by.get(("asio_pool", "fib"), {}).get("round_values", [])) == 2, "asio_pool × fib in 2 rounds")
    naive_wakeup = by.get(("naive", "wakeup"), {})
    expect("p50_ns" in naive_wakeup.get("metrics", {}) and "round_values" not in naive_wakeup,
           "naive × wakeup measured once (the first round only)")
    expect(len(by.get(("asio_pool", "wakeup"), {}).get("round_values", [])) == 2, "asio_pool × wakeup in 2 rounds")
    md = open(os.path.join(out, "results.md")).read()
    expect("(quick)" in md.splitlines()[0] and "--full" in md, "results.md is labelled quick and names --full")
    expect(re.search(r"^\| naive \| skip \|", md, re.M) is not None, "the summary shows naive × fib as skip")
    if tbb:
        expect(re.search(r"^\| tbb/again \| [0-9.]+ \|", md, re.M) is not None and "tbb/again" in md.split("## fib")[0],
               "results.md shows tbb/again's fib ratio in the summary and names it as a noise floor")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
