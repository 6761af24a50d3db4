#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Smoke and command-line test for one bench_<name> executable.

Runs every catalogued workload small (so results are verified, cheaply), checks each JSON record
has the documented fields, and checks that bad arguments exit with code 2 and say what is wrong.
With --expect-wrong it instead checks that a wrong result exits 1 with "verification failed"; with
--expect-switches (bench_selftest, whose wakeup sleeps n times a repetition) that the record's
context switches are counted per repetition: at least n voluntary ones, and not the warm-up's.
Usage: bench_cli_test.py BINARY NAME [--expect-wrong | --expect-switches]
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import expect, verdict

SMALL_N = {"fib": 15, "skynet": 1000, "nqueens": 6, "matmul": 128, "submit": 20000,
           "submit_future": 20000, "vector_fill": 64, "wakeup": 200, "memory": 2000}
FIELDS = ["workload", "params", "variant", "threads", "reps", "median_ns", "min_ns", "max_ns",
          "mean_ns", "stddev_ns", "max_rss_kib", "context_switches", "compiler", "flags", "cpu"]

def run(binary, *args, timeout=300):
    p = subprocess.run([binary, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def main():
    binary, name = sys.argv[1], sys.argv[2]
    if "--expect-wrong" in sys.argv:
        rc, out, err = run(binary, "--workload", "fib", "--n", "20", "--reps", "1")
        expect(rc == 1, f"wrong fib result exits 1 (got {rc})")
        expect("verification failed" in err and "fib(20)" in err, "and says which result was wrong")
        expect("median" not in out, "and reports no time")
        return verdict()
    if "--expect-switches" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "switches.json")
            # 30 sleeps in each of 3 warm-ups and 3 repetitions: a count that ran from the start
            # (warm-ups included) would give the repetitions 120, 150 and 180, a median of 150.
            rc, out, err = run(binary, "--workload", "wakeup", "--n", "30", "--reps", "3", "--warmup", "3",
                               "--json", path)
            expect(rc == 0, f"selftest wakeup exits 0 (exit {rc}: {err.strip()[:300]})")
            if rc == 0:
                cs = json.load(open(path))[0].get("context_switches", {})
                v, i = cs.get("voluntary"), cs.get("involuntary")
                expect(v is not None and 30 <= v < 90, f"30 sleeps a repetition: 30 or a few more voluntary switches (got {v})")
                expect(i is not None and i >= 0, f"involuntary switches counted, >= 0 (got {i})")
                expect("context switches a repetition:" in out, "the summary prints them")
        return verdict()

    rc, out, _ = run(binary, "--help")
    expect(rc == 0 and "--workload" in out, "--help exits 0 and shows usage")
    rc, out, _ = run(binary, "--list")
    expect(rc == 0 and all(w in out for w in SMALL_N), "--list names every workload")

    bad = [(["--workload", "nope"], "unknown workload 'nope'"),
           (["--workload", "fib", "--n", "abc"], "n"),
           (["--workload", "fib", "--n", "99"], "out of range"),
           (["--workload", "matmul", "--n", "100"], "power of 2"),
           (["--workload", "skynet", "--n", "999"], "power of 10"),
           (["--workload", "fib", "--threads", "0"], "--threads 0"),
           (["--workload", "fib", "--reps", "0"], "--reps 0"),
           (["--frobnicate"], "frobnicate"),
           ([], "--workload is required")]
    for args, message in bad:
        rc, out, err = run(binary, *args)
        expect(rc == 2 and message in err, f"{' '.join(args) or '(no args)'} exits 2 and mentions '{message}'"
               + ("" if rc == 2 else f" (exit {rc}, stderr {err.strip()!r})"))

    with tempfile.TemporaryDirectory() as tmp:
        for workload, n in SMALL_N.items():
            path = os.path.join(tmp, f"{workload}.json")
            rc, out, err = run(binary, "--workload", workload, "--n", str(n), "--threads", "2",
                               "--reps", "2", "--warmup", "0", "--json", path)
            if rc != 0:
                expect(False, f"{workload} n={n} exits 0 (exit {rc}: {err.strip()[:300]})")
                continue
            with open(path) as f:
                records = json.load(f)
            expect(isinstance(records, list) and len(records) == 1, f"{workload}: JSON is an array of one record")
            r = records[0]
            if not r.get("supported", False):
                expect("not supported:" in out and r.get("reason"), f"{workload}: not supported, with a reason")
                continue
            missing = [k for k in FIELDS if k not in r]
            expect(not missing, f"{workload}: record has every field" + (f" (missing {missing})" if missing else ""))
            expect(r["variant"] == name and r["workload"] == workload and r["params"]["n"] == n,
                   f"{workload}: record names variant, workload and n")
            expect(0 < r["min_ns"] <= r["median_ns"] <= r["max_ns"], f"{workload}: min <= median <= max, all > 0")
            cs = r.get("context_switches", {})
            expect(all(cs.get(k, -1) >= 0 for k in ("voluntary", "involuntary")),
                   f"{workload}: context switches a repetition, voluntary and involuntary, >= 0")
            if workload in ("submit", "submit_future"):
                expect(r["metrics"].get("ns_per_task", 0) > 0, f"{workload}: reports ns_per_task")
            if workload == "wakeup":
                expect(0 < r["metrics"]["p50_ns"] <= r["metrics"]["p99_ns"], "wakeup: reports p50 <= p99")
            if workload == "memory":
                expect("bytes_per_task" in r["metrics"], "memory: reports bytes_per_task")
            if workload == "vector_fill":
                expect("speedup_tasks_T" in r["metrics"], "vector_fill: reports speedups")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
