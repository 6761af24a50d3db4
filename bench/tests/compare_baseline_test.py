#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks compare.py --baseline: each variant also runs from the other build, as <subject>@base.

Usage: compare_baseline_test.py BUILD OUT_DIR
Runs the first registered variant and asio_pool on `submit` (--quick, 2 rounds) with BUILD as its
own baseline, then checks: the <variant>@base record exists, with a value in every round; the
reference ran twice (the floor, on every workload with --baseline); results.md has
the "subject ÷ subject@base" table whose cell is the subject's value over the baseline's; and a
--baseline that is not a build directory is refused with a message that says so.
"""
import json
import os
import subprocess
import sys

from checks import expect, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
COMPARE = os.path.join(HERE, "..", "compare.py")


def main():
    build, out = sys.argv[1], sys.argv[2]
    variant = next(l.strip() for l in open(os.path.join(build, "pools_variants.txt")) if l.strip())
    bad = subprocess.run([sys.executable, COMPARE, "--build", build, "--baseline", out + "-missing",
                          "--subjects", variant, "--workloads", "submit", "--out", out + "-bad"],
                         capture_output=True, text=True)
    expect(bad.returncode != 0 and "not a build directory" in bad.stderr,
           f"a --baseline that is no build directory is refused ({bad.returncode}: {bad.stderr.strip()[:120]})")
    run = subprocess.run([sys.executable, COMPARE, "--build", build, "--baseline", build, "--quick", "--rounds", "2",
                          "--threads", "2", "--subjects", f"{variant},asio_pool", "--workloads", "submit",
                          "--out", out], capture_output=True, text=True, timeout=280)
    expect(run.returncode == 0, f"compare.py --baseline ran (exit {run.returncode}: {run.stderr.strip()[-200:]})")
    if run.returncode != 0:
        return verdict()
    records = json.load(open(os.path.join(out, "results.json")))["records"]
    by = {r["variant"]: r for r in records}
    base = by.get(f"{variant}@base")
    expect(base is not None and len(base.get("round_values", [])) == 2,
           f"{variant}@base ran in both rounds")
    expect("asio_pool/again" in by, "the reference ran twice (the noise floor)")
    md = open(os.path.join(out, "results.md")).read()
    expect("## Against the baseline build" in md, "results.md has the baseline table")
    if base is not None and variant in by:
        key = "ns_per_task"
        ratio = by[variant]["metrics"][key] / base["metrics"][key]
        expect(f"| {variant} | {ratio:.2f} |" in md, f"its cell is {variant} ÷ {variant}@base = {ratio:.2f}")
    expect("noise floor (reference/again ÷ reference)" in md, "the table has its noise floor row")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
