#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks what bench_compare_smoke wrote: the interleaved rounds and the reference's second run.

Usage: compare_records_test.py OUT_DIR ROUNDS
Every rounds workload in OUT_DIR/results.json must have, for each subject, ROUNDS round values, a
median round as its value, and round by round ratios to the reference; the reference must also
appear as "<reference>/again" (the noise floor), and results.md must explain that row.
"""
import json
import statistics
import sys

from checks import expect, verdict

ROUNDS_WORKLOADS = {"submit", "submit_future", "wakeup"}  # bench/compare.py's, all judged against asio_pool


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    records = json.load(open(f"{out}/results.json"))["records"]
    by = {(r["variant"], r["workload"]): r for r in records}
    for workload in sorted({r["workload"] for r in records} & ROUNDS_WORKLOADS):
        subjects = [v for v, w in by if w == workload]
        ref = by.get(("asio_pool", workload))
        again = by.get(("asio_pool/again", workload))
        expect(ref is not None and again is not None, f"{workload}: asio_pool and asio_pool/again both ran")
        if ref is None or again is None:
            continue
        expect("bench_asio_pool " in again["command"],
               f"{workload}: asio_pool/again ran the reference's binary ({again['command']})")
        ref_rounds = ref.get("round_values", [])
        for s in subjects:
            r = by[(s, workload)]
            values = r.get("round_values", [])
            expect(len(values) == rounds, f"{workload}/{s}: {rounds} round values (got {len(values)})")
            value = r["metrics"].get("p50_ns", r["metrics"].get("ns_per_task"))
            low_median = sorted(values)[(len(values) - 1) // 2] if values else None
            expect(value == low_median, f"{workload}/{s}: the value {value} is the median round of {values}")
            ratios = r.get("round_ratios", [])
            expect(len(ratios) == len(values) and all(
                abs(x - v / rv) < 1e-9 for x, v, rv in zip(ratios, values, ref_rounds)),
                f"{workload}/{s}: round_ratios are the rounds divided by asio_pool's, round by round")
        expect(statistics.median(again["round_ratios"]) > 0, f"{workload}: the noise floor is a ratio")
    md = open(f"{out}/results.md").read()
    expect("| asio_pool/again |" in md and "noise floor" in md, "results.md shows and explains the noise floor row")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
