#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Side-by-side comparison: every bench_<subject> on every workload, in one run.

Subjects are the registered variants (<build>/pools_variants.txt, written by CMake), their
flavours (variants/<name>/bench/flavours.txt: the same binary run again under an environment
setting, e.g. reactor/shared), plus the references that were built (tbb, openmp, asio_pool,
naive, boost_fiber, stdexec_pool when stdexec was found). Each (subject, workload)
runs as its own process (so max RSS is per workload) under a time limit. Results are written to
--out as results.json (every record), results.md (tables with ratios to a reference measured in
the same run) and results.png (when matplotlib is available).

The per-task workloads have targets near 1.0 and runs that swing by +-15 % on a 2-core machine, and
single fork-join ratios to oneTBB moved by up to 2x between runs, so both (ROUNDS_WORKLOADS) run
in --rounds interleaved rounds: each round runs every subject once,
in an order rotated by one per round, and a subject's record is its median round (its other
rounds' values are kept in the record as round_values, and its ratio to the reference round by
round as round_ratios). A slow drift of the machine then hits every subject alike instead of
whichever happened to run during it. The reference also runs a second time in those rounds, as
"<reference>/again": its ratio to itself is the run's noise floor, and a subject whose ratio is no
further from 1.00 than that has no measurable difference from the reference.

  bench/compare.py --build build --out bench/results/latest [--threads 2] [--reps 3] [--rounds 3]
                   [--subjects futures,tbb] [--workloads fib,submit] [--timeout 300]
                   [--baseline OTHER_BUILD]

--baseline OTHER_BUILD answers "did this change make a pool slower?": every variant (and flavour)
built there runs too, as "<subject>@base", right after the subject in every round, and results.md
gets a table of subject ÷ subject@base. Every workload then also runs the reference twice, so each
column has its noise floor. OTHER_BUILD is another build directory: of the commit before the change
(a git worktree), or of the same sources configured otherwise (-DPOOLS_TRACE=ON against off).
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import subprocess
import sys

from progress import Progress

REFERENCES = ["tbb", "openmp", "asio_pool", "naive", "boost_fiber", "stdexec_pool"]
WORKLOADS = ["fib", "skynet", "nqueens", "matmul", "submit", "submit_future", "vector_fill", "wakeup", "memory"]
# What each workload is judged by, which way is better, and the reference it is a ratio to.
MEASURE = {
    "fib": ("median_ns", "time", "lower", "tbb"),
    "skynet": ("median_ns", "time", "lower", "tbb"),
    "nqueens": ("median_ns", "time", "lower", "tbb"),
    "matmul": ("median_ns", "time", "lower", "tbb"),
    "submit": ("ns_per_task", "ns/task", "lower", "asio_pool"),
    "submit_future": ("ns_per_task", "ns/task", "lower", "asio_pool"),
    "vector_fill": ("speedup_tasks_T", "speedup at T tasks", "higher", "tbb"),
    "wakeup": ("p50_ns", "p50 latency", "lower", "asio_pool"),
    "memory": ("bytes_per_task", "bytes/task", "lower", "asio_pool"),
}
# The naive baseline starts a thread per task and Boost.Fiber takes 30-40 s per fork-join run (a
# malloc'd stack per fiber): one repetition is enough to see either.
SLOW_SUBJECTS = {"naive": {"--reps": "1", "--warmup": "0"}, "boost_fiber": {"--reps": "1", "--warmup": "0"}}
# memory is measured cold, once: after a warm-up (or a first repetition) the allocators' caches
# already hold the memory and the growth reads 0 (coroutine frames, pooled stacks).
COLD_WORKLOADS = {"memory": {"--reps": "1", "--warmup": "0"}}
# --quick measures the per-task workloads on fewer tasks: 200,000 submissions instead of a million
# (the cost per task is the same once the pool is warm; a million futures take 20-40 s on the slow
# references), 2,000 wake-up samples instead of 10,000 (each waits 200 µs on an idle pool; the full
# run's 10,000 keep its p99 steady).
# Fork-join runs in rounds too, so the quick run measures smaller problems (a quarter to a tenth of
# the work: fib(27), skynet(10^5), nqueens(11), matmul(512)) to stay within a few minutes.
QUICK_SIZES = {"submit": {"--n": "200000"}, "submit_future": {"--n": "200000"}, "wakeup": {"--n": "2000"},
               "fib": {"--n": "27"}, "skynet": {"--n": "100000"}, "nqueens": {"--n": "11"}, "matmul": {"--n": "512"}}
FORK_JOIN = ["fib", "skynet", "nqueens", "matmul"]
# Run in interleaved rounds, with the reference run twice (its noise floor): the per-task
# workloads, whose targets are close to 1.0, and fork-join, whose single-run ratios to oneTBB
# moved by up to 2x between runs on a 2-core machine. The slow subjects' fork-join (a minute a
# round) runs in the first round only.
ROUNDS_WORKLOADS = FORK_JOIN + ["submit", "submit_future", "wakeup"]
# --quick (compare.sh's default, a first look in a few minutes): one repetition after the warm-up,
# and the runs that take half a minute each left out: the slow subjects' fork-join, and naive's
# million-thread submissions; the slow subjects' per-task runs (10-40 s each for Boost.Fiber's
# submissions) in the first round only. --full runs everything.
QUICK_SKIPS = {(s, w) for s in SLOW_SUBJECTS for w in FORK_JOIN} | {("naive", "submit"), ("naive", "submit_future")}
# --quick: fork-join of the fiber textbook pool (a fresh 256 KiB stack per task: 30-50x oneTBB,
# seconds a run even at the quick sizes, half of the quick run's fork-join time in rounds) in the
# first round only; a ratio that far from 1.00 needs no noise floor.
QUICK_FORK_JOIN_ONCE = {"fibers/textbook"}


def fail(msg):
    """Exit 2 with the message, named by the script that runs (compare.py, or scaling.py using this module)."""
    print(f"{os.path.basename(sys.argv[0]) or 'compare.py'}: {msg}", file=sys.stderr)
    sys.exit(2)


# Flavours whose setting changes only some workloads (an `only=` word in flavours.txt): on the
# others they would measure their variant again, so they are reported as such, not run.
FLAVOUR_ONLY = {}


def read_flavours(variants):
    """{"<variant>/<label>": {VAR: value}} from each variant's bench/flavours.txt (optional)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    flavours = {}
    for v in variants:
        path = os.path.join(root, "variants", v, "bench", "flavours.txt")
        if not os.path.exists(path):
            continue
        for n, line in enumerate(open(path), 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            env = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            if len(env) != len(words) - 1 or not env:
                fail(f"{path}:{n}: expected '<label> VAR=value... [only=WORKLOAD,...]', got '{line.strip()}'")
            only = env.pop("only", None)  # a setting that changes these workloads alone
            if only is not None:
                FLAVOUR_ONLY[f"{v}/{words[0]}"] = set(only.split(","))
            flavours[f"{v}/{words[0]}"] = env
    return flavours


def tasks_of(workload, n):
    """How many tasks one run of `workload` at size n makes (bench/harness): fib one per call,
    2·F(n+1) − 1; skynet every node of a tree with fan-out 10 and n leaves; nqueens the root and
    every legal placement; submit, submit_future, memory n."""
    if workload == "fib":
        a, b = 0, 1  # F(0), F(1)
        for _ in range(n + 1):
            a, b = b, a + b
        return 2 * a - 1  # a = F(n + 1)
    if workload == "skynet":
        return (10 * n - 1) // 9
    if workload == "nqueens":
        def below(cols):  # this node and every legal placement under it (queens_board::can_place)
            row = len(cols)
            return 1 + sum(below(cols + (c,)) for c in range(n) if row < n
                           and all(cols[r] != c and abs(cols[r] - c) != row - r for r in range(row)))
        return below(())
    return n


def build_config(build):
    """{CMAKE_CXX_COMPILER_ID, CMAKE_CXX_COMPILER_VERSION, CMAKE_BUILD_TYPE} of a build directory,
    as far as it says: the cache has the build type, CMakeCXXCompiler.cmake the compiler."""
    found = {}
    files = [os.path.join(build, "CMakeCache.txt")]
    for root, _, names in os.walk(os.path.join(build, "CMakeFiles")):
        files += [os.path.join(root, n) for n in names if n == "CMakeCXXCompiler.cmake"]
    for path in files:
        try:
            text = open(path).read()
        except OSError:
            continue
        for key in ("CMAKE_CXX_COMPILER_ID", "CMAKE_CXX_COMPILER_VERSION", "CMAKE_BUILD_TYPE"):
            m = re.search(rf'^{key}:\w+=(.*)$|^set\({key} "([^"]*)"\)', text, re.M)
            if m and key not in found:
                found[key] = (m.group(1) or m.group(2) or "").strip()
    return found


def source_commit(build):
    """The commit of the sources a build directory was configured from (its CMakeCache.txt), as
    that source tree is now: what was compiled is not recorded, so "+ uncommitted changes" says
    the tree differs from its commit today."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            src = next(l.split("=", 1)[1].strip() for l in f if l.startswith("CMAKE_HOME_DIRECTORY:"))
        out = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return (out.stdout.strip() or "unknown") + (" + uncommitted changes" if dirty else "")
    except (OSError, StopIteration):
        return "unknown"


def machine(cpu):
    """One line for the "measured at" lines of the docs (scripts/fill-numbers.py): CPUs, model, VM or
    not, and the distribution, e.g. "2 vCPU AMD EPYC VM, Debian GNU/Linux 12 (bookworm)"."""
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith("flags")), "") if os.path.exists("/proc/cpuinfo") else ""
    vm = " hypervisor" in flags or flags.endswith("hypervisor")
    distro = platform.system()
    if os.path.exists("/etc/os-release"):
        distro = next((l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release")
                       if l.startswith("PRETTY_NAME=")), distro)
    return f"{os.cpu_count()} {'vCPU' if vm else 'CPU'} {cpu}{' VM' if vm else ''}, {distro}"


def find_binary(build, subject):
    subject = subject.split("/", 1)[0]  # a flavour runs its variant's binary
    hits = sorted(glob.glob(os.path.join(build, "**", f"bench_{subject}"), recursive=True))
    hits = [h for h in hits if os.path.isfile(h) and os.access(h, os.X_OK)]
    return hits[0] if hits else None


def value_of(record, workload):
    key = MEASURE[workload][0]
    if not record.get("supported"):
        return None
    return record["median_ns"] if key == "median_ns" else record.get("metrics", {}).get(key)


def human(v, unit):
    if v is None:
        return "—"
    if unit == "time":
        return f"{v / 1e9:.3f} s" if v >= 1e9 else f"{v / 1e6:.2f} ms" if v >= 1e6 else f"{v / 1e3:.1f} µs"
    if unit in ("ns/task", "p50 latency"):
        return f"{v:,.0f} ns"
    if unit == "bytes/task":
        return f"{v:,.0f} B"
    return f"{v:.2f}×"


def run_one(binary, subject, workload, args, out_dir, env, progress):
    path = os.path.join(out_dir, "raw", f"{subject.replace('/', '_')}.{workload}.json")
    # A slow subject's or a cold workload's --reps/--warmup replace the run's (the harness
    # rejects an option given twice).
    opts = {"--reps": str(args.reps), "--warmup": "1", **SLOW_SUBJECTS.get(subject, {}),
            **COLD_WORKLOADS.get(workload, {}), **(QUICK_SIZES.get(workload, {}) if args.quick else {})}
    return bench_run(binary, subject, workload, args.threads, opts, path, env, args.timeout, progress)


def bench_run(binary, subject, workload, threads, opts, path, env, timeout, progress):
    """One bench_<subject> process: `opts` ({"--n": "30", ...}) after the workload, thread count and
    --json PATH; `env` (a flavour's setting) on top of this environment. Returns its JSON record
    with "variant" and "command" set, or a record that says it failed or timed out."""
    cmd = [binary, "--workload", workload, "--threads", str(threads), "--json", path]
    cmd += [x for kv in opts.items() for x in kv]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, **env} if env else None)
    except subprocess.TimeoutExpired:
        return {"workload": workload, "variant": subject, "supported": False,
                "reason": f"timed out after {timeout} s", "command": " ".join(cmd)}
    if p.returncode != 0:
        return {"workload": workload, "variant": subject, "supported": False, "failed": True,
                "reason": (p.stderr.strip() or f"exit {p.returncode}")[:300], "command": " ".join(cmd)}
    progress.write(p.stdout)
    with open(path) as f:
        record = json.load(f)[0]
    record["variant"] = subject  # a flavour's binary may name itself differently
    prefix = "".join(f"{k}={v} " for k, v in (env or {}).items())
    record["command"] = prefix + " ".join(os.path.relpath(c) if c == binary else c for c in cmd)
    return record


AGAIN = "/again"  # suffix of the reference's second run (find_binary maps it to the reference)
BASE = "@base"  # suffix of a subject run from the --baseline build


def plan(subjects, workload, args):
    """The subjects run for `workload` (with the reference's second run) and how many rounds."""
    rounds = args.rounds if workload in ROUNDS_WORKLOADS else 1
    ref = MEASURE[workload][3]
    if (workload in ROUNDS_WORKLOADS or args.baseline) and ref in subjects:
        subjects = subjects + [ref + AGAIN]  # last, so the rotation keeps it apart from the first run
    return subjects, rounds


def run_rounds(binaries, subjects, workload, args, flavours, progress):
    """Each subject's record for `workload`: the median of args.rounds interleaved rounds."""
    subjects, rounds = plan(subjects, workload, args)
    ref = MEASURE[workload][3]
    runs = {s: [] for s in subjects}
    for k in range(rounds):
        order = subjects[k % len(subjects):] + subjects[:k % len(subjects)]
        for s in order:
            if runs[s] and value_of(runs[s][-1], workload) is None:
                progress.advance()
                continue  # unsupported or failed: once is enough
            base = s[:-len(AGAIN)] if s.endswith(AGAIN) else s
            plain = base.removesuffix(BASE)  # a baseline run has its subject's flavour
            once = base in SLOW_SUBJECTS and (args.quick or workload in FORK_JOIN) or (
                args.quick and workload in FORK_JOIN and base in QUICK_FORK_JOIN_ONCE)
            if once and k > 0:
                progress.advance()
                continue  # a slow subject runs in the first round only
            if plain in FLAVOUR_ONLY and workload not in FLAVOUR_ONLY[plain]:
                runs[s].append({"workload": workload, "variant": s, "supported": False, "skipped": True,
                                "reason": f"its setting changes only {', '.join(sorted(FLAVOUR_ONLY[plain]))}: "
                                          f"here it is {plain.split('/')[0]} itself"})
                progress.advance()
                continue
            if args.quick and (base, workload) in QUICK_SKIPS:
                runs[s].append({"workload": workload, "variant": s, "supported": False, "skipped": True,
                                "reason": "left out of the quick run (half a minute a run); --full runs it"})
                progress.advance()
                continue
            progress.start(f"{s} × {workload}" + (f" (round {k + 1}/{rounds})" if rounds > 1 else ""))
            runs[s].append(run_one(binaries[base], s, workload, args, args.out, flavours.get(plain), progress))
            progress.advance()
    records = []
    for s in subjects:
        measured = sorted((r for r in runs[s] if value_of(r, workload) is not None),
                          key=lambda r: value_of(r, workload))
        if len(measured) < len(runs[s]) or len(measured) < 2:
            records.append(runs[s][-1])  # a single run, or a failure that must be reported
            continue
        record = dict(measured[(len(measured) - 1) // 2])  # the lower median for an even count
        record["round_values"] = [value_of(r, workload) for r in runs[s]]
        ref_values = [value_of(r, workload) for r in runs.get(ref, [])]
        if len(ref_values) == len(runs[s]) and all(ref_values):
            record["round_ratios"] = [v / rv for v, rv in zip(record["round_values"], ref_values)]
        records.append(record)
    return records


def markdown(records, args, subjects, meta):
    quick = (["**Quick run, for a first look**: one repetition per run, 200,000 submissions and 2,000 "
              "wake-up samples, fib(27), skynet(10⁵), nqueens(11) and matmul(512), the slow "
              "references' fork-join runs left out and their per-task runs in the first round only. "
              "`scripts/compare.sh --full` makes the published numbers.", ""] if args.quick else [])
    lines = ["# pools: side-by-side comparison" + (" (quick)" if args.quick else ""), "", *quick,
             f"{meta['date']} · {meta['cpu']} · {args.threads} threads · {args.reps} reps (median) · "
             f"{', '.join(ROUNDS_WORKLOADS)}: median of {args.rounds} interleaved rounds · "
             f"commit {meta['commit']}", "",
             "Reproduce: `bench/compare.py --build build --out <dir> " + ("--quick " if args.quick else "") +
             f"--threads {args.threads} --reps {args.reps} --rounds {args.rounds}` "
             "(each row's exact command is in results.json).",
             "Ratios are to the reference measured in the same run; for time, ns and bytes below 1 is "
             "better, for speedup above 1 is better.", ""]
    by = {(r["variant"], r["workload"]): r for r in records}
    notes = unsupported_notes(records, args.workloads)
    # summary matrix
    lines += ["## Summary: ratio to the reference", "",
              "| subject | " + " | ".join(f"{w} (÷{MEASURE[w][3]})" for w in args.workloads) + " |",
              "|---|" + "---|" * len(args.workloads)]
    for s in subjects:
        cells = []
        for w in args.workloads:
            r, ref = by.get((s, w)), by.get((MEASURE[w][3], w))
            v, rv = (value_of(r, w) if r else None), (value_of(ref, w) if ref else None)
            if v is not None:
                cells.append(f"{v / rv:.2f}" if rv else "—")  # "—": the reference did not run
            else:
                cells.append("—" if not r else "FAIL" if r.get("failed") else "skip" if r.get("skipped")
                             else "n/s" + notes[r.get("reason", "")][0])
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines += ["", "n/s: not supported by that subject, for the reason its footnote gives."
              + (" skip: left out of this quick run." if args.quick else ""), ""]
    for mark, subjects_of, workloads_of, reason in notes.values():
        lines.append(f"- {mark} {', '.join(subjects_of)} ({', '.join(workloads_of)}): {reason or 'no reason given'}")
    if notes:
        lines.append("")
    again = [s for s in subjects if s.endswith(AGAIN)]
    if again:
        lines += [f"{', '.join(again)}: the reference run a second time in the same rounds, so its ratio is "
                  "this run's noise floor: a subject no further from 1.00 than that is not measurably "
                  "different from the reference."]
    lines.append("")
    lines += baseline_table(by, args, subjects, meta)
    for w in args.workloads:
        key, unit, better, ref_name = MEASURE[w]
        ref = by.get((ref_name, w))
        rv = value_of(ref, w) if ref else None
        lines += [f"## {w} — {unit}, {better} is better, reference {ref_name}", "",
                  "| subject | value | ratio | min … max (time) | max RSS | note |", "|---|---|---|---|---|---|"]
        for s in subjects:
            r = by.get((s, w))
            if r is None:
                continue
            v = value_of(r, w)
            if v is None:
                if r.get("failed") or r.get("skipped"):
                    why = ("**failed**: " if r.get("failed") else "skipped: ") + r.get("reason", "")
                else:
                    why = f"not supported{notes[r.get('reason', '')][0]} (the footnote under the summary)"
                lines.append(f"| {s} | — | — | — | — | {why} |")
                continue
            ratio = f"{v / rv:.2f}" if rv else "—"
            extra = ", ".join(f"{k}={x:.3g}" for k, x in sorted(r.get("metrics", {}).items()) if k != key)
            if "round_values" in r:
                rounds = f"rounds: {' / '.join(human(x, unit) for x in r['round_values'])}"
                if "round_ratios" in r and s != ref_name:
                    rounds += f" (÷{ref_name}: {' / '.join(f'{x:.2f}' for x in r['round_ratios'])})"
                extra = rounds + (", " + extra if extra else "")
            lines.append(f"| {s} | {human(v, unit)} | {ratio} | {human(r['min_ns'], 'time')} … "
                         f"{human(r['max_ns'], 'time')} | {r['max_rss_kib'] / 1024:.1f} MiB | {extra} |")
        lines.append("")
    return "\n".join(lines)


SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def unsupported_notes(records, workloads):
    """One footnote per distinct "not supported" reason, instead of the reason in every cell:
    {reason: (mark, [subjects], [workloads], reason)}, marks ¹ ² ... in the order of first use."""
    notes = {}
    for w in workloads:
        for r in records:
            if r["workload"] != w or value_of(r, w) is not None or r.get("failed") or r.get("skipped"):
                continue
            reason = r.get("reason", "")
            mark = notes.setdefault(reason, (str(len(notes) + 1).translate(SUPERSCRIPT), [], [], reason))
            for where, what in ((mark[1], r["variant"]), (mark[2], w)):
                if what not in where:
                    where.append(what)
    return notes


def baseline_table(by, args, subjects, meta):
    """--baseline: each subject ÷ the same subject from the other build, with the noise floor."""
    if not args.baseline:
        return []
    lines = [f"## Against the baseline build: subject ÷ subject{BASE}", "",
             f"This build: `{args.build}` (commit {meta['build_commit']}); baseline: `{args.baseline}` "
             f"(commit {meta['baseline_commit']}). Below 1: faster than the baseline (for speedup, above 1).", "",
             "| subject | " + " | ".join(args.workloads) + " |", "|---|" + "---|" * len(args.workloads)]
    floors = []
    for w in args.workloads:
        ref_name = MEASURE[w][3]
        r, a = by.get((ref_name, w)), by.get((ref_name + AGAIN, w))
        v, av = (value_of(r, w) if r else None), (value_of(a, w) if a else None)
        floors.append(f"{av / v:.2f}" if v and av else "—")
    for s in subjects:
        if s.endswith(BASE) or (s + BASE) not in subjects:
            continue
        cells = []
        for w in args.workloads:
            r, b = by.get((s, w)), by.get((s + BASE, w))
            v, bv = (value_of(r, w) if r else None), (value_of(b, w) if b else None)
            cells.append(f"{v / bv:.2f}" if v is not None and bv else "—")
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    lines += ["| *noise floor (reference/again ÷ reference)* | " + " | ".join(floors) + " |", "",
              "A ratio no further from 1.00 than the floor of its column is no measurable difference.", ""]
    return lines


def plot(records, args, subjects, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("compare.py: matplotlib not available here, no plot written "
              "(Debian: python3-matplotlib, used by /usr/bin/python3)", file=sys.stderr)
        return False
    by = {(r["variant"], r["workload"]): r for r in records}
    cols = 3
    rows = (len(args.workloads) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for i, w in enumerate(args.workloads):
        ax = axes[i // cols][i % cols]
        key, unit, better, ref_name = MEASURE[w]
        ref = by.get((ref_name, w))
        rv = value_of(ref, w) if ref else None
        names, ratios = [], []
        for s in subjects:
            r = by.get((s, w))
            v = value_of(r, w) if r else None
            if v is not None and rv:
                names.append(s)
                ratios.append(v / rv)
        colors = ["#999999" if n.split("/", 1)[0] in REFERENCES else "#9ecae1" if n.endswith("/textbook")
                  else "#4c72b0" for n in names]
        ax.barh(names, ratios, color=colors)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{w}: {unit} ÷ {ref_name} ({better} is better)", fontsize=9)
        if ratios and max(ratios) / max(min(ratios), 1e-9) > 30:
            ax.set_xscale("log")
        ax.tick_params(labelsize=8)
    for j in range(len(args.workloads), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(f"pools, {args.threads} threads: ratio to the same-run reference "
                 "(dark blue: tuned pools, light blue: textbook pools, grey: references)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def render(args):
    """--render: results.md from a results.json, with the run's own settings; nothing is measured."""
    try:
        run = json.load(open(args.render))
    except (OSError, ValueError) as e:
        fail(f"--render {args.render}: {e}")
    records = run.get("records", [])
    for key in ("threads", "reps", "rounds", "quick"):
        setattr(args, key, run.get(key))
    meta = run.get("meta", {})
    args.baseline = meta.get("baseline")
    seen = {r["workload"] for r in records}
    args.workloads = [w for w in WORKLOADS if w in seen]
    subjects = list(dict.fromkeys(r["variant"] for r in records))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(markdown(records, args, subjects, meta))
    print(f"wrote {args.out}/results.md from {args.render}")
    return 0


def discover_subjects(build, requested=None):
    """What `build` can run: (variants, flavours, subjects, binaries). The variants come from
    <build>/pools_variants.txt, the flavours from their bench/flavours.txt, the references from
    REFERENCES; `requested` (a comma list, or None for every one that is built) picks the subjects.
    An unknown subject, or a requested or registered one whose bench_<name> is not built, is an
    error (exit 2); a reference that was not built is left out unless it was requested."""
    listing = os.path.join(build, "pools_variants.txt")
    if not os.path.exists(listing):
        fail(f"{listing} not found: configure and build first (cmake --preset release && cmake --build build)")
    variants = [l.strip() for l in open(listing) if l.strip()]
    flavours = read_flavours(variants)
    known = [x for v in variants for x in [v] + [f for f in flavours if f.startswith(v + "/")]] + REFERENCES
    subjects = requested.split(",") if requested else known
    for s in subjects:
        if s not in known:
            fail(f"unknown subject '{s}'; known: {', '.join(known)}")
    binaries = {}
    for s in subjects:
        b = find_binary(build, s)
        if b:
            binaries[s] = b
        elif s.split("/", 1)[0] in variants or requested:
            b = f"bench_{s.split('/', 1)[0]}"
            fail(f"{b}{f' (for {s})' if '/' in s else ''} is not built in {build} (cmake --build {build} --target {b})")
    return variants, flavours, [s for s in subjects if s in binaries], binaries


def run_meta():
    """Where a run's numbers come from: date, CPU, the checkout's commit, and the machine line."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
    return {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "cpu": cpu, "commit": commit or "unknown",
            "machine": machine(cpu)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="bench/results/latest")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--quick", action="store_true",
                    help="a first look in a few minutes: --reps 1 unless given; naive's and boost_fiber's "
                         "fork-join and naive's submit runs left out, their other runs in the first round "
                         "only; submit and submit_future with 200,000 tasks, wakeup with 2,000 samples, "
                         "fork-join on smaller problems (fib 27, skynet 10^5, nqueens 11, matmul 512)")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--rounds", type=int, default=3,
                    help=f"interleaved rounds for {', '.join(ROUNDS_WORKLOADS)} (median round reported)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per (subject, workload) run")
    ap.add_argument("--subjects", help="comma list (default: every registered variant and built reference)")
    ap.add_argument("--workloads", help="comma list (default: all)")
    ap.add_argument("--baseline", help="another build directory: its variants run as <subject>@base beside "
                                       "this build's, and results.md shows subject ÷ subject@base")
    ap.add_argument("--render", metavar="RESULTS_JSON",
                    help="run nothing: write <out>/results.md again from a results.json this script wrote "
                         "(after a change to the report's layout)")
    args = ap.parse_args()
    if args.render:
        return render(args)
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    if args.threads < 1 or args.reps < 1 or args.rounds < 1 or args.timeout < 1:
        fail("--threads, --reps, --rounds and --timeout must be positive")

    variants, flavours, subjects, binaries = discover_subjects(args.build, args.subjects)
    args.workloads = args.workloads.split(",") if args.workloads else WORKLOADS
    for w in args.workloads:
        if w not in WORKLOADS:
            fail(f"unknown workload '{w}'; known: {', '.join(WORKLOADS)}")
    if args.baseline:
        if not os.path.exists(os.path.join(args.baseline, "pools_variants.txt")):
            fail(f"--baseline {args.baseline}: not a build directory (no pools_variants.txt)")
        with_base = []
        for s in subjects:
            with_base.append(s)
            b = find_binary(args.baseline, s) if s.split("/", 1)[0] in variants else None
            if b:
                binaries[s + BASE] = b
                with_base.append(s + BASE)  # right after its subject: the same conditions
        subjects = with_base

    os.makedirs(os.path.join(args.out, "raw"), exist_ok=True)
    meta = run_meta()
    if args.baseline:
        meta["baseline"] = args.baseline
        # Both labels from the same source: each build's own source tree.
        meta["build_commit"] = source_commit(args.build)
        meta["baseline_commit"] = source_commit(args.baseline)

    records = []
    total = 0
    for w in args.workloads:
        planned, rounds = plan(subjects, w, args)
        total += len(planned) * rounds
    progress = Progress(total)
    for w in args.workloads:
        for r in run_rounds(binaries, subjects, w, args, flavours, progress):
            s = r["variant"]
            if r.get("failed") or "timed out" in r.get("reason", ""):
                progress.write(f"{s:<12} {w:<14} FAILED: {r['reason']}")
            elif r.get("skipped"):
                progress.write(f"{s:<12} {w:<14} skipped: {r['reason']}")
            elif not r.get("supported"):
                progress.write(f"{s:<12} {w:<14} not supported: {r.get('reason', '')}")
            records.append(r)
    progress.close()

    # The reference's second runs (run_rounds) are reported after the subjects asked for.
    subjects += [v for v in dict.fromkeys(r["variant"] for r in records) if v not in subjects]
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "threads": args.threads, "reps": args.reps, "rounds": args.rounds, "quick": args.quick,
                   "records": records}, f, indent=2)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(markdown(records, args, subjects, meta))
    plotted = plot(records, args, subjects, os.path.join(args.out, "results.png"))
    print(f"\nwrote {args.out}/results.json, results.md" + (", results.png" if plotted else ""))
    failed = [r for r in records if r.get("failed") or "timed out" in r.get("reason", "")]
    if failed:
        print(f"compare.py: {len(failed)} run(s) failed or timed out", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
