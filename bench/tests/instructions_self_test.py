#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shows that the instruction-count guard (bench/instructions.py) can fail, and how it updates.

Usage: instructions_self_test.py BUILD_DIR WORK_DIR
On one path (coroutines/fork_join, a few seconds under callgrind), against copies of the committed
baseline in WORK_DIR:
- the committed count passes (exit 0);
- the count lowered by 5 % (as if the code had grown by 5.3 %) fails with exit 1, naming the path
  and the growth;
- --update without --why is refused (exit 2) and leaves the file as it was;
- --update --why rewrites the moved count with that why and keeps the other entries' why;
- --per-task prints stack_task's per-task counts (the guard's) and refuses wrong arguments.
"""
import json
import os
import re
import subprocess
import sys

from checks import expect, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
GUARD = os.path.join(HERE, "..", "instructions.py")
BASELINE = os.path.join(HERE, "..", "instructions-baseline.json")
PATH = "coroutines/fork_join"


def guard(build, baseline, *extra):
    cmd = [sys.executable, GUARD, "--build", build, "--baseline", baseline, "--paths", PATH, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240)


def main():
    build, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    committed = json.load(open(BASELINE))
    expect(PATH in committed["paths"], f"the committed baseline has {PATH}")
    if PATH not in committed["paths"]:
        return verdict()

    same = os.path.join(work, "same.json")
    json.dump(committed, open(same, "w"), indent=2)
    p = guard(build, same)
    expect(p.returncode == 0, f"the committed count passes (exit {p.returncode}: {p.stdout[-400:]}{p.stderr[-400:]})")

    lowered = json.loads(json.dumps(committed))
    lowered["paths"][PATH]["instructions"] = round(committed["paths"][PATH]["instructions"] * 0.95, 1)
    low = os.path.join(work, "lowered.json")
    json.dump(lowered, open(low, "w"), indent=2)
    p = guard(build, low)
    expect(p.returncode == 1, f"a baseline 5 % lower fails the guard with exit 1 (got {p.returncode})")
    m = re.search(re.escape(PATH) + r": [0-9.]+ -> [0-9.]+ instructions per operation \(\+([0-9.]+) %\)", p.stderr)
    expect(m is not None and 5.0 < float(m.group(1)) < 5.6,
           f"the failure names {PATH} and its growth, about +5.3 % (stderr: {p.stderr.strip()[-400:]})")
    expect("--update --why" in p.stderr, "the failure says how to update the baseline with a why")

    before = open(low).read()
    p = guard(build, low, "--update")
    expect(p.returncode == 2 and "--why" in p.stderr, f"--update without --why is refused (exit {p.returncode})")
    expect(open(low).read() == before, "a refused update leaves the baseline as it was")

    p = guard(build, low, "--update", "--why", "self-test: the count moved")
    expect(p.returncode == 0, f"--update --why rewrites the baseline (exit {p.returncode}: {p.stderr[-300:]})")
    updated = json.load(open(low))
    entry = updated["paths"].get(PATH, {})
    # Back near the committed count (a count the baseline keeps within 0.1 % of its measurement).
    near = abs(entry.get("instructions", 0) / committed["paths"][PATH]["instructions"] - 1) < 0.001
    expect(entry.get("why") == "self-test: the count moved" and near,
           f"the moved count is back, with the new why ({entry})")
    others = [k for k in committed["paths"] if k != PATH]
    expect(all(updated["paths"].get(k, {}).get("why") == committed["paths"][k]["why"] for k in others) and others,
           "the counts not measured keep their why")

    # --per-task: a table of whole workloads, and its wrong arguments said as such (exit 2).
    def run(*extra):
        cmd = [sys.executable, GUARD, "--build", build, *extra]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=240)

    p = run("--subjects", "fibers")
    expect(p.returncode == 2 and "--per-task" in p.stderr, f"--subjects without --per-task is refused ({p.stderr.strip()})")
    p = run("--per-task", "--subjects", "coroutines/no_such_flavour")
    expect(p.returncode == 2 and "no_such_flavour" in p.stderr, f"an unknown flavour is named ({p.stderr.strip()})")
    p = run("--per-task", "--external", "libfork")
    expect(p.returncode == 2 and "NAME=BINARY" in p.stderr, f"--external without a binary is refused ({p.stderr.strip()})")
    p = run("--per-task", "--update", "--why", "x")
    expect(p.returncode == 2, f"--per-task does not rewrite the baseline (exit {p.returncode})")
    p = run("--per-task", "--subjects", "")
    expect(p.returncode == 2 and "no subject" in p.stderr, f"--per-task with no subject is refused ({p.stderr.strip()})")
    p = run("--per-task", "--subjects", "no_such_variant")
    expect(p.returncode == 2 and "'no_such_variant'" in p.stderr, f"an unknown subject is named ({p.stderr.strip()})")
    p = run("--per-task", "--subjects", "coroutines/framestack")
    row = re.search(r"^coroutines/framestack\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)$", p.stdout, re.M)
    expect(p.returncode == 0 and row is not None, f"--per-task prints a row per subject ({p.stdout[-300:]}{p.stderr[-300:]})")
    if row:
        fib = float(row.group(1))
        was = committed["paths"].get("coroutines/framestack:fib", {}).get("instructions", 0)
        expect(abs(fib / was - 1) < 0.03 if was else False,
               f"its fib count is the guard's coroutines/framestack:fib ({fib} against {was})")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
