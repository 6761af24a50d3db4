#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs bench/scaling.py --quick on two subjects and checks what it wrote.

Usage: scaling_smoke_test.py BUILD_DIR OUT_DIR
- bad arguments exit 2 naming what was wrong;
- the quick run exits 0 and scaling.json says where its numbers came from (command, commit, date,
  machine, compiler, nproc, load average);
- every requested point of every requested sweep has a value for both subjects, or is a workload
  the subject's own `--list` says it does not support; time per task is the run's time over the
  tasks it makes (fib's calls counted here by recursion); speedup is the one-thread time over
  this one; context switches per task are given, >= 0; the reference ran twice where it is the
  floor's;
- the verdict table has the 2-thread fib speedup of the work-stealing subject;
- one PNG per sweep when the interpreter running the script has matplotlib, none (and a message)
  when it has not;
- --budget: sizes predicted to take longer are skipped with the reason; --publish refuses a quick run;
  --replot draws the PNGs again from scaling.json and refuses a folder without one;
- a bench's max_rss_kib is its own peak, not its parent's (Linux carries ru_maxrss across exec).
"""
import functools
import json
import os
import re
import subprocess
import sys

from checks import expect, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scaling.py")
sys.path.insert(0, os.path.join(HERE, ".."))
import compare  # noqa: E402  (find_binary: where a subject's bench is)
import scaling  # noqa: E402  (WORK_STEALING and the quick sizes: which points were asked for)


def interpreter():
    """The first of this Python and Debian's that has matplotlib (python3-matplotlib belongs to
    /usr/bin/python3), so the plots are exercised where they can be; else this Python."""
    for candidate in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(candidate) and subprocess.run([candidate, "-c", "import matplotlib"],
                                                        capture_output=True).returncode == 0:
            return candidate, True
    return sys.executable, False


@functools.lru_cache(maxsize=None)
def calls(n):
    """Calls of the naive recursive fib(n), counted: what one run of the fib workload spawns."""
    return 1 if n < 2 else 1 + calls(n - 1) + calls(n - 2)


def unsupported(build, subject):
    """The workloads a subject's bench says (in --list) it does not support."""
    out = subprocess.run([compare.find_binary(build, subject), "--list"], capture_output=True, text=True).stdout
    names = re.findall(r"^(\w+) ", out, re.M)
    states = re.findall(r"^\s+(yes|not supported.*)$", out, re.M)
    return {n for n, s in zip(names, states) if s != "yes"}


def main():
    build, out = sys.argv[1], sys.argv[2]
    python, has_matplotlib = interpreter()
    variants = [l.strip() for l in open(os.path.join(build, "pools_variants.txt")) if l.strip()]
    pool = next((v for v in ["coroutines", "fibers"] + variants if v in variants and "fib" not in unsupported(build, v)),
                variants[0])
    subjects = [pool, "asio_pool"]

    for bad, says in [(["--sweeps", "threads,bogus"], "unknown sweep 'bogus'"),
                      (["--threads", "2,x"], "not a comma list"),
                      (["--threads", "2,4"], "must include 1"),
                      (["--rounds", "0"], "--rounds must be positive"),
                      (["--thread-workloads", "nqueens"], "'nqueens' is not one the thread sweep runs"),
                      (["--subjects", "nosuch"], "unknown subject 'nosuch'")]:
        p = subprocess.run([python, SCRIPT, "--build", build, "--out", out, *bad], capture_output=True, text=True,
                           timeout=30)
        expect(p.returncode == 2 and says in p.stderr, f"{' '.join(bad)}: exit 2 saying \"{says}\" "
                                                       f"(got {p.returncode}: {p.stderr.strip()[-200:]})")

    sweeps = ["threads", "fib", "submit", "memory"]
    threads = [1, 2, 4]
    thread_workloads = ["fib", "submit"]
    for name in sweeps:  # a PNG left from an earlier run must not pass for this one's
        if os.path.exists(os.path.join(out, f"{name}.png")):
            os.remove(os.path.join(out, f"{name}.png"))
    cmd = [python, SCRIPT, "--build", build, "--out", out, "--quick", "--subjects", ",".join(subjects),
           "--sweeps", ",".join(sweeps), "--threads", ",".join(map(str, threads)),
           "--thread-workloads", ",".join(thread_workloads), "--timeout", "20"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=50)
    expect(p.returncode == 0, f"scaling.py --quick exits 0 (got {p.returncode}: {p.stderr.strip()[-300:]})")
    data = json.load(open(os.path.join(out, "scaling.json")))

    for k in ("title", "command", "commit", "date", "machine", "compiler", "load_average"):
        expect(isinstance(data.get(k), str) and data[k], f"scaling.json says its {k}")
    expect(data.get("compiler", "unknown") != "unknown", f"the compiler is the build's ({data.get('compiler')})")
    expect(data.get("nproc") == len(os.sched_getaffinity(0)), "nproc is the CPUs this process may use")
    expect("--quick" in data["command"] and data.get("quick") is True and data.get("rounds") == 2,
           "a quick run: its command, two rounds")
    expect(list(data["sweeps"]) == sweeps, f"the sweeps asked for, in order (got {list(data['sweeps'])})")

    skipped = {s: unsupported(build, s) for s in subjects}
    for name, sweep in data["sweeps"].items():
        if name == "threads":
            wanted = [(w, scaling.THREAD_SIZES[w][1], t) for w in thread_workloads for t in threads]
        else:
            wanted = [(name, n, len(os.sched_getaffinity(0))) for n in scaling.SIZES[name][1]]
        by = {(r["subject"], r["workload"], r["n"], r["threads"]): r for r in sweep["points"]}
        missing, wrong = [], []
        for s in subjects:
            for w, n, t in wanted:
                r = by.get((s, w, n, t))
                if r is None or (r["status"] != "ok" and not (r["status"] == "unsupported" and w in skipped[s])):
                    missing.append(f"{s} {w} n={n} t={t}: {r and r['status']} {r and r.get('reason')}")
                    continue
                if r["status"] != "ok":
                    continue
                tasks = calls(n) if w == "fib" else n
                per_task = r["time_per_task_ns"]
                if not (per_task > 0 and r["tasks"] == tasks and r["max_rss_kib"] > 0 and r["rounds"] == 2):
                    wrong.append(f"{s} {w} n={n} t={t}: {r}")
                if w == "fib" and abs(per_task - r["median_ns"] / tasks) > 1e-6 * per_task:
                    wrong.append(f"{s} fib n={n}: time per task {per_task} is not {r['median_ns']} / {tasks} calls")
                if not (r.get("switches_per_task", -1) >= 0):
                    wrong.append(f"{s} {w} n={n} t={t}: no context switches per task ({r.get('switches_per_task')})")
                if w == "memory" and not r.get("bytes_per_task"):
                    wrong.append(f"{s} memory n={n}: no bytes_per_task")
                if name == "threads":
                    one = by[(s, w, n, 1)]
                    if abs(r["speedup"] - one["time_per_task_ns"] / per_task) > 1e-9:
                        wrong.append(f"{s} {w} t={t}: speedup {r['speedup']} is not the 1-thread time over this one")
        expect(not missing, f"{name}: every requested point has a value ({len(missing)} missing: {missing[:3]})")
        expect(not wrong, f"{name}: time per task, speedup, switches and memory as defined ({wrong[:2]})")
        ref = compare.MEASURE[sweep["points"][0]["workload"]][3]
        if ref in subjects:
            againp = [r for r in sweep["points"] if r["subject"] == ref + compare.AGAIN and r["status"] == "ok"]
            floor = sweep["floors"][sweep["points"][0]["workload"]]["floor"]
            expect(againp and floor and floor >= 1, f"{name}: {ref} ran again at the points, its floor ≥ 1 ({floor})")
        png = os.path.join(out, f"{name}.png")
        if has_matplotlib:
            expect(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n" and sweep.get("png"),
                   f"{name}.png written (matplotlib is there)")
        else:
            expect(not os.path.exists(png), f"no {name}.png without matplotlib")
    if not has_matplotlib:
        expect("matplotlib not available" in p.stderr, "without matplotlib the run says so")

    rows = data["tables"]["verdict"]["rows"]
    if pool in scaling.WORK_STEALING:
        row = next((r for r in rows if r[0] == "fib speedup at 2 threads" and r[1] == pool), None)
        expect(row is not None and isinstance(row[2], float) and row[4] in ("meets", "MISSES"),
               f"the verdict table judges {pool}'s speedup at 2 threads ({row})")
    expect(any(r[0].startswith("fib cost per task") for r in rows), "the verdict table has the flatness target")
    md = open(os.path.join(out, "scaling.md")).read()
    expect("## The targets" in md and "Quick run" in md, "scaling.md: the targets, labelled a quick run")

    p = subprocess.run([python, SCRIPT, "--publish", out], capture_output=True, text=True, timeout=30)
    expect(p.returncode == 2 and "quick run" in p.stderr, f"--publish refuses a quick run ({p.stderr.strip()})")

    # --replot: the PNGs drawn again from scaling.json, the JSON untouched; a folder without one refused.
    if has_matplotlib:
        before = open(os.path.join(out, "scaling.json")).read()
        for name in data["sweeps"]:
            os.remove(os.path.join(out, f"{name}.png"))
        p = subprocess.run([python, SCRIPT, "--replot", out], capture_output=True, text=True, timeout=60)
        drawn = all(open(os.path.join(out, f"{n}.png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n"
                    for n in data["sweeps"] if os.path.exists(os.path.join(out, f"{n}.png")))
        expect(p.returncode == 0 and drawn and all(os.path.exists(os.path.join(out, f"{n}.png")) for n in data["sweeps"]),
               f"--replot draws every sweep's PNG again ({p.returncode}: {p.stderr.strip()[-200:]})")
        expect(open(os.path.join(out, "scaling.json")).read() == before, "--replot leaves scaling.json as it was")
    p = subprocess.run([python, SCRIPT, "--replot", out + "-nothing-here"], capture_output=True, text=True, timeout=30)
    expect(p.returncode == 2 and "--replot" in p.stderr, f"--replot of a folder without a run is refused ({p.stderr.strip()})")

    # --budget: the smallest size (and one thread) runs; every larger size (and more threads) is
    # predicted over a microsecond's budget. It needs a subject that runs fib: the pool, or asio_pool
    # where the only variant built cannot (the hand-out's futures pool).
    timed = pool if "fib" not in unsupported(build, pool) else "asio_pool"
    p = subprocess.run([python, SCRIPT, "--build", build, "--out", out + "-budget", "--quick", "--subjects", timed,
                        "--sweeps", "fib,threads", "--threads", "1,2,3", "--thread-workloads", "fib",
                        "--budget", "1e-6"], capture_output=True, text=True, timeout=30)
    sweeps = json.load(open(os.path.join(out + "-budget", "scaling.json")))["sweeps"]
    for name, axis in (("fib", "n"), ("threads", "threads")):
        first, *rest = sorted(sweeps[name]["points"], key=lambda r: r[axis])
        expect(p.returncode == 0 and first["status"] == "ok" and len(rest) == 2
               and all(r["status"] == "skipped" and "--budget" in r["reason"] for r in rest),
               f"--budget, {name} sweep: the first point runs, the others are skipped with the reason "
               f"({[(r['status'], r.get('reason')) for r in rest]})")

    # max_rss_kib: a bench started by a parent that holds 256 MiB reports its own few MiB.
    ballast = bytearray(256 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    rss_json = os.path.join(out, "rss.json")
    subprocess.run([compare.find_binary(build, "asio_pool"), "--workload", "submit", "--n", "1000", "--threads", "1",
                    "--reps", "1", "--json", rss_json], capture_output=True, timeout=30)
    rss = json.load(open(rss_json))[0]["max_rss_kib"]
    expect(rss < 128 * 1024, f"max_rss_kib is the bench's own peak, not its parent's 256 MiB (got {rss} KiB)")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
