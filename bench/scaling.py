#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How cost grows: every pool and reference swept over threads and over problem size.

  bench/scaling.py --build build --out bench/results/scaling [--quick] [--subjects a,b]
                   [--sweeps threads,fib,skynet,submit,memory] [--rounds 5] [--reps 3]

Sweeps (one PNG each, <out>/<sweep>.png):
  threads  fib, skynet and submit (--thread-workloads) at one size, on 1 ... nproc threads, then
           2x and 4x nproc (oversubscribed): time per task, speedup over the same subject on one
           thread, peak RSS, context switches per task (sleeping and waking threads). nproc is
           the CPUs this process may run on (os.sched_getaffinity), so the script runs unchanged
           on a machine with many cores.
  fib      fib(20) ... fib(32), every second index, on nproc threads: time per call (one task per
           call) and peak RSS, as the problem grows 2.6x per step.
  skynet   10^4 ... 10^7 leaves: time per node of the tree, peak RSS.
  submit   10^3 ... 10^7 outside submissions: ns per task, peak RSS and its growth per task.
  memory   10^3 ... 10^6 tasks suspended at once: the bench's own bytes per task, and the time
           to suspend them.
  size     all four size sweeps.

The subjects, their binaries and flavours, one bench process per measurement, the slow references'
single repetition, the cold memory runs and the reference's second run as the noise floor are
bench/compare.py's (imported, not copied). Rounds are interleaved over the whole sweep: each
round runs every point of the sweep, every subject once per point in an order rotated by one per
round, so a slow minute of the machine lands on every subject and size alike; a point's value is
its median round. Where the sweep's reference (oneTBB for fork-join, asio_pool for submit and
memory) is among the subjects it runs twice at every point, as "<ref>/again": its ratio to itself
is the sweep's noise floor.

A run is skipped, with the reason recorded, when the same subject's previous size predicts it
would take longer than --budget seconds or hold more than half of the memory available now (so
a thread per task, or a stack per task, stops at the size it can still run).

Writes <out>/scaling.json (shaped as a docs/results record: title, command, commit, date,
machine, load_average, values, tables, plus every point), <out>/scaling.md (the tables and the
verdicts) and the PNGs when matplotlib is available (Debian: python3-matplotlib). Prints the
scaling targets as a verdict table; a missed target is a finding, not an error: the exit code is
1 only when a run failed or timed out, 2 for bad arguments. --publish RUN_DIR copies a full run
into docs/results/scaling/; --replot RUN_DIR draws a run's PNGs again from its scaling.json.
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (the comparison's subjects, runs and records)
from compare import AGAIN, COLD_WORKLOADS, FLAVOUR_ONLY, MEASURE, REFERENCES, SLOW_SUBJECTS, fail  # noqa: E402
from progress import Progress  # noqa: E402

# Problem sizes of each size sweep: the full run's, and --quick's (a smoke run in seconds).
SIZES = {
    "fib": ([20, 22, 24, 26, 28, 30, 32], [14, 16, 18]),
    "skynet": ([10**4, 10**5, 10**6, 10**7], [10**2, 10**3, 10**4]),
    "submit": ([10**3, 10**4, 10**5, 10**6, 10**7], [10**3, 10**4]),
    "memory": ([10**3, 10**4, 10**5, 10**6], [10**3, 10**4]),
}
SIZE_SWEEPS = list(SIZES)
SWEEPS = ["threads"] + SIZE_SWEEPS
# The size each workload of the thread sweep runs at (the comparison's defaults), and --quick's.
THREAD_SIZES = {"fib": (30, 18), "skynet": (10**6, 10**4), "submit": (10**6, 10**4), "submit_future": (10**6, 10**4)}
THREAD_WORKLOADS = ["fib", "skynet", "submit"]
# The pools that steal work, which the 2-thread speedup target is about. The textbook pools share
# one queue; futures' tuned pool has one two-lock queue; the reactor gives each thread its own
# io_context and never moves work; libgomp's tasks sit in one team-wide queue.
WORK_STEALING = {"coroutines", "coroutines/nocache", "coroutines/workfirst", "coroutines/framestack", "fibers",
                 "tbb", "boost_fiber", "stdexec_pool"}
# The scaling targets: speedup at 2 threads on fib, flat cost per task from fib 24 to 32, and at
# most twice the time under 4x oversubscription (bench/README.md, "How cost grows").
SPEEDUP_TARGET = 1.8  # at 2 threads on fib, every work-stealing pool
FLAT_RANGE = (24, 32)  # fib indices between which the cost per task stays within the noise floor
OVERSUBSCRIBED_LIMIT = 2.0  # time at 4x nproc threads / time at nproc threads


tasks_of = compare.tasks_of  # the divisor of "time per task"


def compiler_of(build):
    """The build's compiler, "GNU 12.2.0" (or "unknown")."""
    config = compare.build_config(build)
    ids = [config.get(k) for k in ("CMAKE_CXX_COMPILER_ID", "CMAKE_CXX_COMPILER_VERSION") if config.get(k)]
    return " ".join(ids) or "unknown"


def cpus():
    """The CPUs this process may run on (a container or taskset may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def thread_points(nproc):
    """1, 2, ... up to 8, then powers of two up to nproc, nproc itself, then 2x and 4x nproc."""
    points = set(range(1, min(nproc, 8) + 1)) | {1 << k for k in range(nproc.bit_length()) if 1 << k <= nproc}
    points |= {nproc, 2 * nproc, 4 * nproc}
    return sorted(p for p in points if p <= 1024)  # the harness's limit


def positive_list(text, what):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        fail(f"{what} '{text}' is not a comma list of whole numbers")
    if not values or any(v < 1 for v in values):
        fail(f"{what} '{text}': every value must be at least 1")
    return sorted(set(values))


def available_kib():
    try:
        with open("/proc/meminfo") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        return None


def load_average():
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


# ---------------------------------------------------------------- the plan


def plan(args):
    """The sweeps as lists of points: {"sweep", "workload", "n", "threads"}."""
    sweeps = {}
    for sweep in args.sweeps:
        if sweep == "threads":
            sweeps[sweep] = [{"sweep": sweep, "workload": w, "n": THREAD_SIZES[w][1 if args.quick else 0], "threads": t}
                             for w in args.thread_workloads for t in args.threads]
        else:
            sizes = SIZES[sweep][1 if args.quick else 0]
            sweeps[sweep] = [{"sweep": sweep, "workload": sweep, "n": n, "threads": args.size_threads} for n in sizes]
    return sweeps


def runners(subjects, workload):
    """The subjects run at a point of `workload`: the subjects, then the reference again (its floor)."""
    ref = MEASURE[workload][3]
    return subjects + [ref + AGAIN] if ref in subjects else subjects


SKIPPED_SMALLER = "as at a smaller size: "


def key(point):
    return (point["workload"], point["n"], point["threads"])


class Sweep:
    """Runs one sweep's points in interleaved rounds and keeps every run."""

    def __init__(self, name, points, subjects, binaries, flavours, args, progress):
        self.name, self.points, self.subjects = name, points, subjects
        self.binaries, self.flavours, self.args, self.progress = binaries, flavours, args, progress
        self.runs = {}  # (subject, point key) -> [records, one per round run]
        self.settled = {}  # (subject, point key) -> a record that stands for every round (skip, n/s, failure)
        self.raw = os.path.join(args.out, "raw")

    def total(self):
        return sum(len(runners(self.subjects, p["workload"])) for p in self.points) * self.args.rounds

    def previous(self, subject, point):
        """The same subject's median-so-far at the largest smaller size of this sweep (same threads)."""
        smaller = [p for p in self.points if p["workload"] == point["workload"] and p["threads"] == point["threads"]
                   and p["n"] < point["n"] and self.runs.get((subject, key(p)))]
        if not smaller:
            return None, None
        p = max(smaller, key=lambda q: q["n"])
        return p, median_record(self.runs[(subject, key(p))])

    def why_not(self, subject, point):
        """A reason to leave this run out (recorded as skipped), or None to run it."""
        base = subject.removesuffix(AGAIN)
        plain = base.split("@", 1)[0]
        w = point["workload"]
        if plain in FLAVOUR_ONLY and w not in FLAVOUR_ONLY[plain]:
            return f"its setting changes only {', '.join(sorted(FLAVOUR_ONLY[plain]))}: here it is {plain.split('/')[0]} itself"
        if self.name == "threads":
            return self.over_budget_threads(subject, point)
        smaller = [self.settled.get((subject, key(p))) for p in self.points
                   if p["workload"] == w and p["threads"] == point["threads"] and p["n"] < point["n"]]
        if any(r and (r.get("failed") or "timed out" in r.get("reason", "")) for r in smaller):
            return "a smaller size failed or timed out"
        for r in smaller:
            if r and r.get("skipped"):  # the first skip's reason holds for every larger size
                return r["reason"] if r["reason"].startswith(SKIPPED_SMALLER) else f"{SKIPPED_SMALLER}{r['reason']}"
        prev_point, prev = self.previous(subject, point)
        if prev is None:
            return None
        growth = tasks_of(w, point["n"]) / tasks_of(w, prev_point["n"])
        opts = opts_for(base, w, self.args)
        reps = int(opts["--reps"]) + int(opts["--warmup"])
        predicted_s = prev["median_ns"] * growth * reps / 1e9
        if predicted_s > self.args.budget:
            return (f"predicted {predicted_s:,.0f} s a run (n={prev_point['n']:,} took "
                    f"{prev['median_ns'] / 1e9:.2f} s a repetition), over --budget {self.args.budget:g} s")
        # Every workload, not only those that hold every task at once by design: a subject that
        # keeps a stack or a queued closure per live task grows with the problem on fork-join too
        # (Boost.Fiber on skynet, a stack per live fiber), and past the memory the kernel's
        # out-of-memory killer ends the run. For a subject whose RSS does not grow, peak RSS in
        # proportion to the tasks is a generous bound, so it skips nothing of theirs.
        avail = available_kib()
        if avail:
            predicted_kib = prev["max_rss_kib"] * growth
            if predicted_kib > avail / 2:
                return (f"predicted peak RSS {predicted_kib / 2**20:.1f} GiB (n={prev_point['n']:,}: "
                        f"{prev['max_rss_kib'] / 1024:.0f} MiB), over half of the {avail / 2**20:.1f} GiB available")
        return None

    def over_budget_threads(self, subject, point):
        """The thread sweep does the same work at every thread count: a subject whose run at fewer
        threads took longer than --budget stops there (a thread per task, a stack per task)."""
        fewer = [p for p in self.points if p["workload"] == point["workload"] and p["threads"] < point["threads"]]
        for p in fewer:
            r = self.settled.get((subject, key(p)))
            if r and r.get("skipped"):
                return r["reason"]
        for p in fewer:
            runs = self.runs.get((subject, key(p)))
            if runs:
                opts = opts_for(subject.removesuffix(AGAIN), point["workload"], self.args)
                took = median_record(runs)["median_ns"] * (int(opts["--reps"]) + int(opts["--warmup"])) / 1e9
                if took > self.args.budget:
                    return (f"at {p['threads']} threads a run took {took:,.0f} s, over --budget {self.args.budget:g} s; "
                            "the work is the same at every thread count")
        return None

    def run(self):
        load = []
        for k in range(self.args.rounds):
            load.append(load_average())
            for point in self.points:
                order = runners(self.subjects, point["workload"])
                order = order[k % len(order):] + order[:k % len(order)]
                for s in order:
                    self.one(s, point, k)
        return load

    def one(self, subject, point, k):
        args, w = self.args, point["workload"]
        slot = (subject, key(point))
        base = subject.removesuffix(AGAIN)
        plain = base.split("@", 1)[0]
        if slot in self.settled or (k > 0 and base in SLOW_SUBJECTS and self.runs.get(slot)):
            self.progress.advance()  # settled, or a slow subject: its first round stands
            return
        reason = self.why_not(subject, point)
        label = {"workload": w, "variant": subject, "params": {"n": point["n"]}, "threads": point["threads"]}
        if reason:
            self.settled[slot] = {**label, "supported": False, "skipped": True, "reason": reason}
            self.progress.advance()
            return
        self.progress.start(f"{subject} × {w} n={point['n']:,} t={point['threads']} "
                            f"(round {k + 1}/{args.rounds})")
        path = os.path.join(self.raw, f"{subject.replace('/', '_')}.{w}.n{point['n']}.t{point['threads']}.r{k}.json")
        record = compare.bench_run(self.binaries[base], subject, w, point["threads"],
                                   {"--n": str(point["n"]), **opts_for(base, w, args)}, path,
                                   self.flavours.get(plain), args.timeout, self.progress)
        self.progress.advance()
        if compare.value_of(record, w) is None:  # not supported, failed, timed out: once is enough
            self.settled[slot] = record
            if record.get("failed") or "timed out" in record.get("reason", ""):
                self.progress.write(f"{subject} × {w} n={point['n']} t={point['threads']}: FAILED: {record['reason']}")
            return
        self.runs.setdefault(slot, []).append(record)


def opts_for(subject, workload, args):
    """The bench options of a run: the run's reps and warm-up, a slow subject's or a cold workload's
    own (one repetition, no warm-up), as the comparison runs them."""
    return {"--reps": str(args.reps), "--warmup": "0" if args.quick else "1",
            **SLOW_SUBJECTS.get(subject, {}), **COLD_WORKLOADS.get(workload, {})}


def median_record(records):
    """The median round (the lower one for an even count), by its time."""
    ordered = sorted(records, key=lambda r: r["median_ns"])
    return ordered[(len(ordered) - 1) // 2]


# ---------------------------------------------------------------- the results


def points_of(sweep_name, sweep, subjects):
    """One result per (subject, point): the median round's numbers, or why there are none."""
    out = []
    for point in sweep.points:
        w = point["workload"]
        for s in runners(subjects, w):
            slot = (s, key(point))
            r = {**point, "subject": s, "tasks": tasks_of(w, point["n"])}
            runs = sweep.runs.get(slot)
            if not runs:
                rec = sweep.settled.get(slot, {"reason": "not run"})
                r["status"] = ("failed" if rec.get("failed") or "timed out" in rec.get("reason", "")
                               else "skipped" if rec.get("skipped") else "unsupported")
                r["reason"] = rec.get("reason", "")
                if rec.get("command"):
                    r["command"] = rec["command"]
                out.append(r)
                continue
            med = median_record(runs)
            per_task = [x["median_ns"] / r["tasks"] for x in runs]
            ns_per_task = [x.get("metrics", {}).get("ns_per_task") for x in runs]
            if all(v is not None for v in ns_per_task):  # submit: the bench's own ns per task
                per_task = ns_per_task
            r.update(status="ok", rounds=len(runs), time_per_task_ns=statistics.median_low(per_task),
                     round_values=per_task, median_ns=med["median_ns"], max_rss_kib=med["max_rss_kib"],
                     command=med["command"])
            bpt = [x.get("metrics", {}).get("bytes_per_task") for x in runs]
            if all(v is not None for v in bpt):
                r["bytes_per_task"] = statistics.median_low(bpt)
            # Context switches per task (voluntary + involuntary, each the bench's median over its
            # repetitions): the time a pool spends putting threads to sleep and waking them, which
            # oversubscription multiplies.
            csw = [x.get("context_switches") for x in runs]
            if all(c is not None for c in csw):
                r["switches_per_task"] = statistics.median_low(
                    (c["voluntary"] + c["involuntary"]) / r["tasks"] for c in csw)
            out.append(r)
    # Speedup over the same subject on one thread (thread sweep), and the peak RSS's growth per task
    # over the smallest size (size sweeps: what each further task holds at the peak).
    by = {(r["subject"], r["workload"], r["n"], r["threads"]): r for r in out}
    for r in out:
        if r["status"] != "ok":
            continue
        if sweep_name == "threads":
            one = by.get((r["subject"], r["workload"], r["n"], 1))
            if one and one["status"] == "ok":
                r["speedup"] = one["time_per_task_ns"] / r["time_per_task_ns"]
        else:
            first = min((x for x in out if x["subject"] == r["subject"] and x["status"] == "ok"),
                        key=lambda x: x["n"])
            if first["n"] < r["n"]:
                r["rss_growth_per_task"] = (r["max_rss_kib"] - first["max_rss_kib"]) * 1024 / (r["tasks"] - first["tasks"])
    return out


def floors(results, subjects):
    """Per workload of a sweep: <ref>/again ÷ <ref> at each point, and the floor, the largest
    deviation from 1 either way (a ratio of 0.95 counts as 1/0.95)."""
    out = {}
    for w in dict.fromkeys(r["workload"] for r in results):
        ref = MEASURE[w][3]
        if ref not in subjects:
            out[w] = {"reference": ref, "floor": None, "why": f"{ref} is not among the subjects: no floor"}
            continue
        by = {(r["subject"], r["n"], r["threads"]): r for r in results if r["workload"] == w}
        ratios = []
        for (s, n, t), r in by.items():
            again = by.get((ref + AGAIN, n, t))
            if s == ref and r["status"] == "ok" and again and again["status"] == "ok":
                ratios.append({"n": n, "threads": t, "ratio": again["time_per_task_ns"] / r["time_per_task_ns"]})
        floor = max((max(x["ratio"], 1 / x["ratio"]) for x in ratios), default=None)
        out[w] = {"reference": ref, "floor": floor, "points": ratios}
    return out


def ok(results, subject, workload, n=None, threads=None):
    for r in results:
        if (r["subject"] == subject and r["workload"] == workload and r["status"] == "ok"
                and (n is None or r["n"] == n) and (threads is None or r["threads"] == threads)):
            return r
    return None


def kind(subject):
    return "reference" if subject.split("/", 1)[0] in REFERENCES else "pool"


def verdicts(data, subjects, nproc):
    """The three scaling targets, one row per (target, subject): [target, subject, value, limit, verdict],
    and {subject: {slug: value}} for the record's values."""
    rows, values = [], {}
    threads = data["sweeps"].get("threads", {}).get("points", [])
    fib = data["sweeps"].get("fib", {})
    judged = [s for s in subjects if not s.endswith(AGAIN)]

    def mark(good, subject):
        word = "meets" if good else "MISSES"
        return word if kind(subject) == "pool" else f"{word.lower()} (reference)"

    # 1. Speedup at 2 threads on fib, every work-stealing pool.
    for s in judged:
        if s not in WORK_STEALING:
            continue
        r = ok(threads, s, "fib", threads=2)
        if nproc < 2:
            rows.append(["fib speedup at 2 threads", s, None, f"≥ {SPEEDUP_TARGET}", "n/a: one CPU"])
        elif r is None or "speedup" not in r:
            rows.append(["fib speedup at 2 threads", s, None, f"≥ {SPEEDUP_TARGET}", "not measured"])
        else:
            rows.append(["fib speedup at 2 threads", s, round(r["speedup"], 2), f"≥ {SPEEDUP_TARGET}",
                         mark(r["speedup"] >= SPEEDUP_TARGET, s)])
            values.setdefault(s, {})["fib_speedup_2_threads"] = round(r["speedup"], 3)
    # 2. Cost per task flat from fib 24 to 32, within the fib sweep's noise floor.
    fib_points = fib.get("points", [])
    sizes = sorted({r["n"] for r in fib_points if FLAT_RANGE[0] <= r["n"] <= FLAT_RANGE[1]})
    # The floor over the sizes the target compares, not over the whole sweep: at the smallest
    # sizes oneTBB runs in two modes (fib(22): 21 or 43 ns a call from round to round), which says
    # nothing about how much two runs of fib(24) ... fib(32) differ.
    in_range = [max(x["ratio"], 1 / x["ratio"]) for x in fib.get("floors", {}).get("fib", {}).get("points", [])
                if FLAT_RANGE[0] <= x["n"] <= FLAT_RANGE[1]]
    floor = max(in_range, default=None)
    for s in judged:
        if not ok(fib_points, s, "fib"):
            continue  # not supported (futures' fork-join) or not run
        name = f"fib cost per task, fib({FLAT_RANGE[0]}) → fib({FLAT_RANGE[1]})"
        lo, hi = (ok(fib_points, s, "fib", n=sizes[0]), ok(fib_points, s, "fib", n=sizes[-1])) if len(sizes) > 1 else (None, None)
        if lo is None or hi is None:
            rows.append([name, s, None, "within the floor", "not measured"])
            continue
        ratio = hi["time_per_task_ns"] / lo["time_per_task_ns"]
        values.setdefault(s, {})["fib_cost_growth"] = round(ratio, 3)
        if floor is None:
            rows.append([name, s, round(ratio, 2), "within the floor", "no floor (run tbb too)"])
        else:
            word = "flat" if 1 / floor <= ratio <= floor else "grows" if ratio > floor else "falls"
            rows.append([name, s, round(ratio, 2), f"≤ {floor:.2f}", f"{word}: " + mark(ratio <= floor, s)])
    # 3. No time more than doubling under 4x oversubscription.
    for w in dict.fromkeys(r["workload"] for r in threads):
        for s in judged:
            at, over = ok(threads, s, w, threads=nproc), ok(threads, s, w, threads=4 * nproc)
            if not ok(threads, s, w):
                continue
            name = f"{w}: time at {4 * nproc} ÷ at {nproc} threads"
            if at is None or over is None:
                rows.append([name, s, None, f"≤ {OVERSUBSCRIBED_LIMIT}", "not measured"])
                continue
            ratio = over["time_per_task_ns"] / at["time_per_task_ns"]
            values.setdefault(s, {})[f"{w}_oversubscribed_4x"] = round(ratio, 3)
            rows.append([name, s, round(ratio, 2), f"≤ {OVERSUBSCRIBED_LIMIT}", mark(ratio <= OVERSUBSCRIBED_LIMIT, s)])
    return rows, values


def human_n(n):
    return f"10^{len(str(n)) - 1}" if n >= 1000 and str(n).strip("0") == "1" else f"{n:,}"


def sweep_tables(name, sweep):
    """Markdown-ready tables of one sweep: time per task (and speedup, or memory) by point."""
    tables = {}
    points = sweep["points"]
    for w in dict.fromkeys(r["workload"] for r in points):
        rs = [r for r in points if r["workload"] == w]
        axis = "threads" if name == "threads" else "n"
        xs = sorted({r[axis] for r in rs})
        subjects = list(dict.fromkeys(r["subject"] for r in rs))
        by = {(r["subject"], r[axis]): r for r in rs}

        def table(title, field, fmt, digits=3):
            cols = ["subject"] + [f"{x} thread{'s' if x > 1 else ''}" if axis == "threads" else human_n(x) for x in xs]
            rows = []
            for s in subjects:
                cells = []
                for x in xs:
                    r = by.get((s, x))
                    v = r.get(field) if r else None
                    cells.append(round(v, digits) if v is not None else ("—" if not r or r["status"] == "ok" else r["status"]))
                rows.append([s] + cells)
            return {"title": title, "columns": cols, "rows": rows, "fmt": [None] + [fmt] * len(xs)}

        prefix = f"{name}_{w}" if name == "threads" else name
        unit = "ns per task" if w != "fib" else "ns per call"
        tables[f"{prefix}_time_per_task"] = table(f"{w}: {unit}", "time_per_task_ns", ",.1f")
        if name == "threads":
            tables[f"{prefix}_speedup"] = table(f"{w}: speedup over one thread", "speedup", ".2f")
            tables[f"{prefix}_switches_per_task"] = table(
                f"{w}: context switches per task (voluntary + involuntary)", "switches_per_task", ".4f", 5)
        elif w == "memory":
            tables[f"{prefix}_bytes_per_task"] = table("memory: bytes per suspended task", "bytes_per_task", ",.0f")
        else:
            tables[f"{prefix}_rss_growth_per_task"] = table(
                f"{w}: peak RSS growth per task over the smallest size, bytes", "rss_growth_per_task", ",.1f")
    return tables


def md_table(t):
    def cell(v, spec):
        if v is None:
            return "—"
        return format(v, spec) if isinstance(v, (int, float)) and spec else str(v)
    numeric = [any(isinstance(r[j], (int, float)) for r in t["rows"]) for j in range(len(t["columns"]))]
    lines = ["| " + " | ".join(t["columns"]) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    fmts = t.get("fmt") or [None] * len(t["columns"])
    lines += ["| " + " | ".join(cell(v, fmts[j]) for j, v in enumerate(row)) + " |" for row in t["rows"]]
    return lines


def markdown(data):
    lines = [f"# {data['title']}", "",
             f"Measured by `{data['command']}` at commit `{data['commit']}`, {data['date']}, on "
             f"{data['machine']} ({data['nproc']} CPUs usable, load average {data['load_average']}).", ""]
    if data["quick"]:
        lines += ["**Quick run**: tiny sizes, one repetition, for checking the script; its numbers "
                  "judge nothing.", ""]
    lines += ["## The targets", "", *md_table(data["tables"]["verdict"]), "",
              "A missed target is a finding for the pools, not a failure of the run. References are shown for "
              "comparison; the targets are the pools'.", ""]
    for name, sweep in data["sweeps"].items():
        lines += [f"## {name}", "", sweep["what"], ""]
        if sweep.get("png"):
            lines += [f"![{name}]({sweep['png']})", ""]
        for w, f in sweep["floors"].items():
            lines.append(f"Noise floor ({w}, {f['reference']}{AGAIN} ÷ {f['reference']}): "
                         + (f"{f['floor']:.2f}" if f["floor"] else f.get("why", "not measured")) + ".")
        lines.append("")
        for tname in sweep["tables"]:
            t = data["tables"][tname]
            lines += [f"### {t['title']}", "", *md_table(t), ""]
        notes = sorted({f"{r['subject']} at {r['workload']} n={r['n']:,} t={r['threads']}: {r['status']}: {r['reason']}"
                        for r in sweep["points"] if r["status"] != "ok"})
        if notes:
            lines += ["Not measured:", ""] + [f"- {x}" for x in notes] + [""]
    return "\n".join(lines)


# ---------------------------------------------------------------- plots


def plot(name, sweep, nproc, path):
    """One PNG for the sweep. False when matplotlib is missing (the caller says so)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        return False
    points = [r for r in sweep["points"] if r["status"] == "ok"]
    workloads = list(dict.fromkeys(r["workload"] for r in sweep["points"]))
    subjects = list(dict.fromkeys(r["subject"] for r in sweep["points"] if not r["subject"].endswith(AGAIN)))
    colours, markers = plt.get_cmap("tab10"), "os^vDP*X"
    style = {s: {"color": colours(i % 10), "marker": markers[i // 10 % len(markers)], "markersize": 3,
                 "linestyle": "--" if kind(s) == "reference" else ":" if s.endswith("/textbook") else "-"}
             for i, s in enumerate(subjects)}
    plain = ticker.FuncFormatter(lambda v, _: f"{v:g}")
    if name == "threads":
        panels = [("speedup", "speedup over 1 thread"), ("time_per_task_ns", "ns per task"), ("max_rss_kib", "peak RSS, MiB")]
        axis = "threads"
    elif name == "memory":
        panels = [("bytes_per_task", "bytes per suspended task"), ("time_per_task_ns", "ns to suspend one task")]
        axis = "n"
    else:
        panels = [("time_per_task_ns", "ns per task" if name != "fib" else "ns per call (one task each)"),
                  ("max_rss_kib", "peak RSS, MiB")]
        axis = "n"
    fig, axes = plt.subplots(len(workloads), len(panels), figsize=(5.2 * len(panels), 3.8 * len(workloads)),
                             squeeze=False)
    for i, w in enumerate(workloads):
        for j, (field, label) in enumerate(panels):
            ax = axes[i][j]
            for s in subjects:
                xs = [(r[axis], r[field] / (1024 if field == "max_rss_kib" else 1)) for r in points
                      if r["subject"] == s and r["workload"] == w and r.get(field) is not None]
                if xs:
                    ax.plot([x for x, _ in xs], [y for _, y in xs], label=s, **style[s])
            if axis == "threads":
                ax.set_xscale("log", base=2)
                ax.set_xticks(sorted({r["threads"] for r in sweep["points"]}))
                ax.xaxis.set_major_formatter(plain)
                ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            elif w != "fib":  # fib's index is already a logarithm of its work
                ax.set_xscale("log")
            else:
                ax.set_xticks(sorted({r["n"] for r in sweep["points"]}))
            ys = [r[field] for r in points if r["workload"] == w and r.get(field)]
            if field != "speedup" and ys and max(ys) > 10 * min(ys):  # subjects orders of magnitude apart
                ax.set_yscale("log")
                ax.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
                ax.yaxis.set_major_formatter(plain)
                ax.yaxis.set_minor_formatter(ticker.NullFormatter())
            if axis == "threads":
                ax.axvline(nproc, color="black", linewidth=0.8, linestyle=":")  # right of it: oversubscribed
                if field == "speedup":
                    ts = sorted({r["threads"] for r in points})
                    ax.plot(ts, [min(t, nproc) for t in ts], color="black", linewidth=0.8, label="ideal")
            n = next(r["n"] for r in sweep["points"] if r["workload"] == w)
            ax.set_title(f"{w} (n={human_n(n)}): {label}" if axis == "threads" else f"{w}: {label}", fontsize=9)
            ax.set_xlabel("threads (dotted: the CPUs)" if axis == "threads" else
                          "fib index" if w == "fib" else "n", fontsize=8)
            ax.tick_params(labelsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for row in axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
    ncol = min(6, max(1, len(labels)))
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0), ncol=ncol, fontsize=8)
    fig.suptitle(f"pools, {name} sweep ({nproc} CPUs; dashed: references, dotted: textbook pools)", fontsize=10)
    # The axes end above the legend: its rows (about 0.2 in each at 8 pt) and a margin, in inches,
    # as a fraction of the figure's height, so that no row covers the x-axis labels.
    rows = (len(labels) + ncol - 1) // ncol
    fig.tight_layout(rect=(0, (0.15 + 0.2 * rows) / fig.get_figheight(), 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# ---------------------------------------------------------------- main

WHAT = {
    "threads": "Each workload at one size on 1 … nproc threads, then 2× and 4× nproc (right of the dotted line): "
               "speedup over the same subject on one thread (the black line is the ideal), time per task, peak RSS. "
               "The tables add the context switches per task (the bench's, voluntary and involuntary): where "
               "a pool's time goes to putting threads to sleep and waking them.",
    "fib": "fib(n) on nproc threads, one task per call: time per call as the problem grows 2.6× per step "
           "(flat is the target), and the process's peak RSS.",
    "skynet": "skynet with 10^k leaves on nproc threads: time per node of the tree, and peak RSS.",
    "submit": "n empty tasks posted from one outside thread, on nproc threads: the bench's ns per task, and peak "
              "RSS (every task is queued at once, so RSS grows with n).",
    "memory": "n tasks suspended at once, measured cold: the bench's bytes per suspended task (RSS growth ÷ n), "
              "and the time to suspend one.",
}


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="bench/results/scaling")
    ap.add_argument("--subjects", help="comma list (default: every registered variant, flavour and built reference)")
    ap.add_argument("--sweeps", default=",".join(SWEEPS),
                    help=f"comma list of {', '.join(SWEEPS)}, or size for the four size sweeps (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run in seconds: tiny sizes, 2 rounds, 1 repetition, no warm-up (judges nothing)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5; --quick 2)")
    ap.add_argument("--reps", type=int, help="repetitions per run, median kept (default 3; --quick 1)")
    ap.add_argument("--timeout", type=int, help="seconds per run before it counts as failed (default 300; --quick 60)")
    ap.add_argument("--budget", type=float,
                    help="skip a size predicted to take longer than this many seconds a run (default 60; --quick 10)")
    ap.add_argument("--threads", help="thread counts of the thread sweep (default: 1 … nproc, 2× and 4× nproc)")
    ap.add_argument("--thread-workloads", default=",".join(THREAD_WORKLOADS),
                    help=f"workloads of the thread sweep, from {', '.join(THREAD_SIZES)} (default {','.join(THREAD_WORKLOADS)})")
    ap.add_argument("--size-threads", type=int, help="threads of the size sweeps (default: nproc)")
    ap.add_argument("--publish", metavar="RUN_DIR",
                    help="run nothing: copy a full run's scaling.json, scaling.md and PNGs from RUN_DIR to "
                         "docs/results/scaling/ (refuses a quick run, and a run of another commit or of uncommitted code)")
    ap.add_argument("--replot", metavar="RUN_DIR",
                    help="run nothing: draw the PNGs of RUN_DIR (a run's folder, or docs/results/scaling) again from "
                         "its scaling.json, the numbers unchanged (and name them in it, for a run made without matplotlib)")
    args = ap.parse_args(argv)
    nproc = cpus()
    sweeps = []
    for s in args.sweeps.split(","):
        if s == "size":
            sweeps += SIZE_SWEEPS
        elif s in SWEEPS:
            sweeps.append(s)
        else:
            fail(f"unknown sweep '{s}'; known: {', '.join(SWEEPS)}, size")
    args.sweeps = list(dict.fromkeys(sweeps))
    args.thread_workloads = list(dict.fromkeys(args.thread_workloads.split(",")))
    for w in args.thread_workloads:
        if w not in THREAD_SIZES:
            fail(f"--thread-workloads: '{w}' is not one the thread sweep runs ({', '.join(THREAD_SIZES)}: "
                 "those whose task count is known before the run)")
    args.threads = positive_list(args.threads, "--threads") if args.threads else thread_points(nproc)
    if args.threads[-1] > 1024:
        fail(f"--threads: {args.threads[-1]} is over the bench's limit of 1024")
    if 1 not in args.threads and "threads" in args.sweeps:
        fail("--threads must include 1: speedup is over the same subject on one thread")
    defaults = {"rounds": (5, 2), "reps": (3, 1), "timeout": (300, 60), "budget": (60, 10)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
        if getattr(args, name) <= 0:
            fail(f"--{name} must be positive (got {getattr(args, name)})")
    if args.size_threads is None:
        args.size_threads = nproc
    elif not 1 <= args.size_threads <= 1024:
        fail(f"--size-threads {args.size_threads} is out of range 1..1024")
    return args, nproc


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_run(run_dir, option):
    """A run folder's (scaling.json's path, its data); a clear error for `option` when it has none."""
    path = os.path.join(run_dir, "scaling.json")
    try:
        return path, json.load(open(path))
    except (OSError, ValueError) as e:
        fail(f"{option} {run_dir}: {e}")


def replot(run_dir):
    """Draws a run's PNGs again from its scaling.json (a change of the drawing, not of the numbers)."""
    path, data = read_run(run_dir, "--replot")
    drawn, named = [], False
    for name, entry in data.get("sweeps", {}).items():
        png = entry.get("png") or f"{name}.png"
        if plot(name, entry, data["nproc"], os.path.join(run_dir, png)):
            drawn.append(png)
            named = named or "png" not in entry  # a run made without matplotlib: its PNGs named now
            entry["png"] = png
    if not drawn:
        fail(f"--replot {run_dir}: nothing drawn (no sweep in it, or no matplotlib here: Debian python3-matplotlib, "
             "used by /usr/bin/python3)")
    if named:  # the JSON and the page that shows the PNGs name them
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
        with open(os.path.join(run_dir, "scaling.md"), "w") as f:
            f.write(markdown(data) + "\n")
    print(f"drew {', '.join(drawn)} in {run_dir}")
    return 0


def publish(run_dir):
    """Copies a full run into docs/results/scaling/, where the docs' generated blocks read it."""
    _, data = read_run(run_dir, "--publish")
    if data.get("quick"):
        fail("--publish: this is a quick run (it judges nothing); publish a full run")
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    commit = data.get("commit", "")
    if "uncommitted" in commit or not head or not (commit.startswith(head) or head.startswith(commit)):
        fail(f"--publish: the run is of {commit or 'an unknown commit'}, HEAD is {head}: run it again on HEAD, "
             "with everything committed, so the published numbers name the code that made them")
    to = os.path.join(ROOT, "docs", "results", "scaling")
    os.makedirs(to, exist_ok=True)
    pngs = [e["png"] for e in data["sweeps"].values() if e.get("png")]
    for old in os.listdir(to):  # nothing of an earlier run stays beside this one
        if old.endswith(".png") and old not in pngs:
            os.remove(os.path.join(to, old))
    for name in ["scaling.json", "scaling.md"] + pngs:
        shutil.copyfile(os.path.join(run_dir, name), os.path.join(to, name))
    print(f"published {run_dir} to {os.path.relpath(to)}: scaling.json, scaling.md" + "".join(f", {p}" for p in pngs)
          + "\nnow run scripts/fill-numbers.py (the pages' blocks that read scaling/scaling.json)")
    return 0


def main(argv=None):
    args, nproc = parse(argv)
    if args.publish:
        return publish(args.publish)
    if args.replot:
        return replot(args.replot)
    _, flavours, subjects, binaries = compare.discover_subjects(args.build, args.subjects)
    if not subjects:
        fail(f"no subject is built in {args.build}")
    os.makedirs(os.path.join(args.out, "raw"), exist_ok=True)

    meta = compare.run_meta()
    started = datetime.datetime.now()
    sweeps = {name: Sweep(name, points, subjects, binaries, flavours, args, None)
              for name, points in plan(args).items()}
    progress = Progress(sum(s.total() for s in sweeps.values()))
    load = []
    for sweep in sweeps.values():
        sweep.progress = progress
        load += sweep.run()
    progress.close()
    load.append(load_average())

    load = [x for x in load if x is not None]
    command = "python3 bench/scaling.py " + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    data = {
        "title": "How cost grows with threads and problem size" + (" (quick run)" if args.quick else ""),
        "command": command,
        "commit": compare.source_commit(args.build),
        "date": started.strftime("%Y-%m-%d"),
        "time": started.strftime("%H:%M"),
        "machine": meta["machine"],
        "compiler": compiler_of(args.build),
        "cpu": meta["cpu"],
        "nproc": nproc,
        "load_average": f"{min(load):.1f}-{max(load):.1f}" if load else "unknown",
        "load_samples": [round(x, 2) for x in load],
        "quick": args.quick,
        "rounds": args.rounds, "reps": args.reps, "budget_s": args.budget, "timeout_s": args.timeout,
        "subjects": subjects,
        "sweeps": {},
        "values": {},
        "tables": {},
        "notes": "Written by bench/scaling.py: time per task is the median round's time ÷ the tasks a run makes "
                 "(fib: calls; skynet: nodes; submit: the bench's ns_per_task); speedup is over the same subject on "
                 "one thread; the floor is the reference's second run ÷ its first at each point, worst point.",
    }
    for name, sweep in sweeps.items():
        results = points_of(name, sweep, subjects)
        entry = {"what": WHAT[name], "threads": args.threads if name == "threads" else [args.size_threads],
                 "floors": floors(results, subjects), "points": results}
        data["sweeps"][name] = entry
        tables = sweep_tables(name, entry)
        data["tables"].update(tables)
        entry["tables"] = list(tables)
    rows, values = verdicts(data, subjects, nproc)
    data["tables"]["verdict"] = {"title": "the scaling targets", "columns": ["target", "subject", "value", "limit", "verdict"],
                                 "rows": rows, "fmt": [None, None, ".2f", None, None]}
    data["values"] = values
    # Values for g:value blocks: each subject's numbers by sweep and point.
    for name, entry in data["sweeps"].items():
        for r in entry["points"]:
            if r["status"] == "ok":
                at = f"t{r['threads']}" if name == "threads" else f"n{r['n']}"
                v = data["values"].setdefault(r["subject"], {}).setdefault(f"{name}_{r['workload']}" if name == "threads"
                                                                           else name, {})
                v[at] = {k: round(r[k], 4) for k in ("time_per_task_ns", "speedup", "bytes_per_task", "max_rss_kib",
                                                          "switches_per_task")
                         if r.get(k) is not None}

    plotted, missing = [], False
    for name, entry in data["sweeps"].items():
        if plot(name, entry, nproc, os.path.join(args.out, f"{name}.png")):
            entry["png"] = f"{name}.png"
            plotted.append(f"{name}.png")
        else:
            missing = True
    if missing:
        print("scaling.py: matplotlib not available here, no plots written, only the JSON and the tables "
              "(Debian: python3-matplotlib, used by /usr/bin/python3)", file=sys.stderr)
    with open(os.path.join(args.out, "scaling.json"), "w") as f:
        json.dump(data, f, indent=1)
    with open(os.path.join(args.out, "scaling.md"), "w") as f:
        f.write(markdown(data) + "\n")

    print()
    print("\n".join(md_table(data["tables"]["verdict"])))
    for name, entry in data["sweeps"].items():
        for w, fl in entry["floors"].items():
            print(f"noise floor, {name} sweep, {w}: " + (f"{fl['floor']:.2f}" if fl["floor"] else fl.get("why", "—")))
    print(f"\nwrote {args.out}/scaling.json, scaling.md" + "".join(f", {p}" for p in plotted))
    failed = [r for e in data["sweeps"].values() for r in e["points"] if r["status"] == "failed"]
    if failed:
        print(f"scaling.py: {len(failed)} point(s) failed or timed out", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
