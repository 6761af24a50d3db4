#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The instruction-count guard: instructions per operation on the tuned pools' hot paths, on one
thread, against the baseline committed in bench/instructions-baseline.json.

Times on a shared 2-core machine swing by 15 % and more, so they cannot stop a change that makes a
hot path slower; instructions executed can. For each path of each driver (bench/instructions/,
instr_<variant> --list) this runs `valgrind --tool=callgrind --collect-atstart=no` twice, with n1
and n2 operations; the driver switches counting on and off on the pool's one worker thread around
the operations (bench/instructions/measure.hpp), and (count(n2) - count(n1)) / (n2 - n1) is the
cost of one operation, with everything done once (start-up, the first allocations, shut-down)
cancelled out.

  bench/instructions.py [--build build]             compare with the baseline: exit 1 when a count
                                                    grew more than 3 % (each one named, by how much)
  bench/instructions.py --update --why "TEXT"       rewrite the baseline; TEXT becomes the "why" of
                                                    every count that moved (required)
  bench/instructions.py --repeat 5                  measure every path 5 times and show the spread
  bench/instructions.py --smoke                     run every driver natively, small (no valgrind)
  bench/instructions.py --per-task [--subjects a,b] [--external NAME=BINARY]
                                                    instructions per task of fib, skynet and nqueens
                                                    (below); prints a table, guards nothing

Per task. Besides the drivers' paths, the guard counts whole workloads of the pools' best
fork-join form (GUARDED_SUBJECTS, "coroutines/framestack:fib" and so on): the bench CLI that every
subject shares runs on one thread, one repetition, no warm-up, under callgrind, at two sizes,

  <binary> --workload <w> --n <n> --threads 1 --reps 1 --warmup 0
  per task = (count at n - count at n0) / (tasks at n - tasks at n0)

with fib 22 and 1 (fib(n) makes 2·F(n+1) - 1 calls), skynet 100000 and 10 ((10·n - 1)/9 nodes)
and nqueens 9 and 1 (the root and every legal placement). --per-task counts the same for any
subject of bench/compare.py, and for a driver built outside the repository that speaks the same
CLI (--external libfork=/path/to/bench_libfork: how docs/optimizations.md compares with peers).

Counts depend on the compiler, its flags and the libraries: the baseline is for the release preset
(GCC 12, Debian 12) and records the toolchain it was made with.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

from compare import build_config, discover_subjects, source_commit, tasks_of

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "instructions-baseline.json")
VARIANTS = ["coroutines", "fibers", "futures", "reactor"]
N1, N2 = 5000, 25000  # operations of the two runs; the difference is what is reported
# Whole workloads: (n, n0) of the two runs, and the subjects the guard counts them for.
WORKLOADS = {"fib": (22, 1), "skynet": (100_000, 10), "nqueens": (9, 1)}
GUARDED_SUBJECTS = ["coroutines/framestack"]
TOLERANCE = 3.0  # per cent a count may grow before the guard fails
MOVED = 0.1  # per cent: on --update, a count that moved less keeps its old "why"


def fail(msg):
    print(f"instructions.py: {msg}", file=sys.stderr)
    sys.exit(2)


def drivers(build):
    """{"<variant>/<path>": (binary, path, operations per n)} for every built driver."""
    found = {}
    for v in VARIANTS:
        binary = os.path.join(build, "bench", "instructions", f"instr_{v}")
        if not os.access(binary, os.X_OK):
            continue
        listing = subprocess.run([binary, "--list"], capture_output=True, text=True, check=True).stdout
        for line in listing.splitlines():
            name, ops = line.split()
            found[f"{v}/{name}"] = (binary, name, int(ops))
    if not found:
        fail(f"no instr_<variant> driver in {build}/bench/instructions "
             f"(cmake --build {build} --target instr_drivers; they need Debian's valgrind package)")
    return found


def workload_subjects(build, subjects, external):
    """{"<subject>:<workload>": ("workload", binary, env, workload)} for compare.py's subjects (found,
    and refused when unknown or not built, as compare.py does) and for external drivers (NAME=BINARY)."""
    found = {}
    if subjects:
        _, flavours, _, binaries = discover_subjects(build, ",".join(subjects))
        for s in subjects:
            for w in WORKLOADS:
                found[f"{s}:{w}"] = ("workload", binaries[s], flavours.get(s, {}), w)
    for e in external:
        name, _, binary = e.partition("=")
        if not name or not binary:
            fail(f"--external takes NAME=BINARY, got '{e}'")
        if any(k.startswith(f"{name}:") for k in found):
            fail(f"--external {name}: that name is already a subject of this table")
        if not os.access(binary, os.X_OK):
            fail(f"--external {name}: {binary} is not an executable")
        for w in WORKLOADS:
            found[f"{name}:{w}"] = ("workload", os.path.abspath(binary), {}, w)
    return found


def callgrind(run, out, env=None, options=()):
    """Instructions callgrind counted in one run of the command `run` (its output file: `out`)."""
    cmd = ["valgrind", "--tool=callgrind", *options, f"--callgrind-out-file={out}", *run]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        setting = "".join(f"{k}={v} " for k, v in (env or {}).items())
        raise RuntimeError(f"{setting}{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-500:]}")
    with open(out) as f:
        totals = [line for line in f if line.startswith("totals:")]
    if not totals:
        raise RuntimeError(f"{out}: no totals line")
    return int(totals[-1].split()[1])


def whole_run(binary, env, workload, n, workdir):
    """Instructions of one whole run of the bench CLI on one thread."""
    out = os.path.join(workdir, f"{os.path.basename(binary)}.{workload}.{n}.out")
    return callgrind([binary, "--workload", workload, "--n", str(n), "--threads", "1", "--reps", "1", "--warmup", "0"],
                     out, env)


def per_task(binary, env, workload, workdir):
    """Instructions of one task: the difference of two whole runs over the difference in tasks."""
    n, n0 = WORKLOADS[workload]
    return (whole_run(binary, env, workload, n, workdir) - whole_run(binary, env, workload, n0, workdir)) / (
        tasks_of(workload, n) - tasks_of(workload, n0))


def collected(binary, path, n, workdir):
    """Instructions callgrind counted while the driver had counting on, for n operations."""
    out = os.path.join(workdir, f"{os.path.basename(binary)}.{path}.{n}.out")
    return callgrind([binary, path, str(n)], out, options=["--collect-atstart=no"])


def per_operation(binary, path, ops, workdir):
    """Instructions of one operation: the difference of an n2 and an n1 run over n2 - n1."""
    c1 = collected(binary, path, N1, workdir)
    c2 = collected(binary, path, N2, workdir)
    return (c2 - c1) / ((N2 - N1) * ops)


def measure(paths, repeat, jobs):
    """{name: [count per operation, one per repetition]}, the valgrind runs spread over `jobs`."""
    results = {name: [] for name in paths}
    with tempfile.TemporaryDirectory(prefix="pools-instr-") as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            futures = {}
            for k in range(repeat):
                for name, entry in paths.items():
                    sub = os.path.join(workdir, f"r{k}", name.replace("/", "_").replace(":", "_"))
                    os.makedirs(sub, exist_ok=True)
                    if entry[0] == "workload":
                        futures[ex.submit(per_task, *entry[1:], sub)] = name
                    else:
                        futures[ex.submit(per_operation, *entry, sub)] = name
            for fut in concurrent.futures.as_completed(futures):
                results[futures[fut]].append(fut.result())
    return results


def toolchain(build):
    """What the counts depend on besides the code: compiler, build type, valgrind."""
    found = build_config(build)
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{found.get('CMAKE_CXX_COMPILER_ID', '?')} {found.get('CMAKE_CXX_COMPILER_VERSION', '?')}, "
            f"{found.get('CMAKE_BUILD_TYPE', '?')}, {valgrind}")


def smoke(paths):
    """Every driver natively on a few thousand operations: it runs, and checks its own result."""
    failed = 0
    paths = {name: entry for name, entry in paths.items() if entry[0] != "workload"}
    for name, (binary, path, _) in sorted(paths.items()):
        p = subprocess.run([binary, path, "3000"], capture_output=True, text=True, timeout=60)
        ok = p.returncode == 0
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": exit {p.returncode}: {p.stderr.strip()}"))
    bad = subprocess.run([next(iter(paths.values()))[0], "no_such_path", "10"], capture_output=True, text=True)
    if bad.returncode != 2 or "unknown path" not in bad.stderr:
        print(f"FAIL an unknown path is refused with exit 2 (got {bad.returncode}: {bad.stderr.strip()})")
        failed += 1
    return 1 if failed else 0


def compare(counts, baseline, tolerance, partial):
    """Prints each path against the baseline; returns the paths that grew beyond the tolerance."""
    grown, missing = [], []
    print(f"{'path':<32} {'baseline':>10} {'now':>10} {'change':>8}")
    for name in sorted(counts):
        now = counts[name]
        entry = baseline["paths"].get(name)
        if entry is None:
            missing.append(name)
            print(f"{name:<32} {'—':>10} {now:>10.1f}   not in the baseline")
            continue
        was = entry["instructions"]
        change = (now - was) / was * 100
        verdict = ""
        if change > tolerance:
            grown.append((name, was, now, change))
            verdict = f"  GREW more than {tolerance:g} %"
        elif change < -tolerance:
            verdict = "  fell: --update keeps the gain guarded"
        print(f"{name:<32} {was:>10.1f} {now:>10.1f} {change:>+7.2f} %{verdict}")
    gone = [] if partial else sorted(set(baseline["paths"]) - set(counts))
    for name in gone:
        print(f"{name:<32} in the baseline but not measured (driver or path missing)")
    return grown, missing + gone


def update(path, counts, old, why, build, partial):
    """Writes the baseline: every count; the why, commit and date of each one that moved. With
    --paths (partial) the paths not measured keep their entries; else they are dropped."""
    commit = source_commit(build)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    entries = dict(old.get("paths", {})) if partial else {}
    for name in sorted(counts):
        now = round(counts[name], 1)
        prev = old.get("paths", {}).get(name)
        if prev and abs(now - prev["instructions"]) / prev["instructions"] * 100 < MOVED:
            entries[name] = prev  # did not move: keeps the count and the why it has
        else:
            entries[name] = {"instructions": now, "why": why, "source": commit, "date": date}
    data = {
        "about": "Instructions per operation on one worker thread (<subject>:<workload>: per task of a "
                 "whole one-thread run), counted by callgrind; "
                 "bench/instructions.py compares and rewrites this file (bench/README.md, "
                 "'The instruction-count guard').",
        "toolchain": toolchain(build),
        "n": [N1, N2],
        "workloads": {w: list(sizes) for w, sizes in WORKLOADS.items()},
        "tolerance_percent": TOLERANCE,
        "paths": dict(sorted(entries.items())),
    }
    with open(path, "w") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.relpath(path)}")


def print_per_task(paths, args):
    """--per-task: a table of instructions per task, subjects by workload (and --json)."""
    results = measure(paths, args.repeat, args.jobs)
    counts = {name: sorted(v)[len(v) // 2] for name, v in results.items()}
    subjects = list(dict.fromkeys(name.rsplit(":", 1)[0] for name in paths))
    print(f"instructions per task, one thread ({', '.join(f'{w}({n}) - {w}({n0})' for w, (n, n0) in WORKLOADS.items())})")
    print(f"{'subject':<28}" + "".join(f"{w:>10}" for w in WORKLOADS))
    for s in subjects:
        print(f"{s:<28}" + "".join(f"{counts[f'{s}:{w}']:>10.1f}" for w in WORKLOADS))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"toolchain": toolchain(args.build), "commit": source_commit(args.build),
                       "workloads": {w: list(sizes) for w, sizes in WORKLOADS.items()},
                       "results": results}, f, indent=2)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help=f"the baseline file (default: {os.path.relpath(BASELINE)})")
    ap.add_argument("--update", action="store_true", help="rewrite the baseline from this measurement")
    ap.add_argument("--why", help="with --update: what changed the counts (required)")
    ap.add_argument("--repeat", type=int, default=1, help="measure every path this many times; show the spread")
    ap.add_argument("--paths", help="comma list of <variant>/<path> (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="valgrind runs at once")
    ap.add_argument("--smoke", action="store_true", help="run every driver natively, small; no valgrind")
    ap.add_argument("--json", help="also write the measured counts to this file")
    ap.add_argument("--per-task", action="store_true",
                    help="instructions per task of fib, skynet and nqueens for --subjects and --external; no guard")
    ap.add_argument("--subjects", help="with --per-task: compare.py's subjects (default: %s)" % ",".join(GUARDED_SUBJECTS))
    ap.add_argument("--external", action="append", default=[], metavar="NAME=BINARY",
                    help="with --per-task: a driver built outside the repository with the bench CLI (repeatable)")
    args = ap.parse_args()
    if args.update and not (args.why or "").strip():
        fail("--update needs --why \"what changed the counts\": the baseline keeps one line per count "
             "saying what changed it last")
    if args.why and not args.update:
        fail("--why goes with --update")
    if args.repeat < 1 or args.jobs < 1:
        fail("--repeat and --jobs must be positive")

    if (args.subjects or args.external) and not args.per_task:
        fail("--subjects and --external go with --per-task")
    if args.per_task:
        if args.update or args.paths or args.smoke or args.baseline:
            fail("--per-task only counts and prints: not with --update, --paths, --smoke or --baseline")
        if shutil.which("valgrind") is None:
            fail("valgrind not found (Debian: valgrind)")
        subjects = [s for s in (GUARDED_SUBJECTS if args.subjects is None else args.subjects.split(",")) if s]
        if not subjects and not args.external:
            fail("--per-task: no subject (--subjects a,b or --external NAME=BINARY)")
        return print_per_task(workload_subjects(args.build, subjects, args.external), args)
    args.baseline = args.baseline or BASELINE

    paths = drivers(args.build)
    # The guard's whole workloads need the bench binary: only when they are to be counted.
    wanted = args.paths.split(",") if args.paths else None
    if not args.smoke and (wanted is None or any(":" in w for w in wanted)):
        paths.update(workload_subjects(args.build, GUARDED_SUBJECTS, []))
    if wanted:
        known = sorted(set(paths) | {f"{s}:{w}" for s in GUARDED_SUBJECTS for w in WORKLOADS})
        for w in wanted:
            if w not in paths:
                fail(f"unknown path '{w}'; known: {', '.join(known)}")
        paths = {w: paths[w] for w in wanted}
    if args.smoke:
        return smoke(paths)
    if shutil.which("valgrind") is None:
        fail("valgrind not found (Debian: valgrind)")

    results = measure(paths, args.repeat, args.jobs)
    counts = {name: sorted(v)[len(v) // 2] for name, v in results.items()}
    if args.repeat > 1:
        print(f"{'path':<32} {'min':>10} {'max':>10} {'spread':>9}   ({args.repeat} measurements each)")
        for name in sorted(results):
            lo, hi = min(results[name]), max(results[name])
            print(f"{name:<32} {lo:>10.2f} {hi:>10.2f} {(hi - lo) / lo * 100:>8.4f} %")
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"toolchain": toolchain(args.build), "n": [N1, N2], "results": results}, f, indent=2)

    old = {}
    if os.path.exists(args.baseline):
        with open(args.baseline) as f:
            old = json.load(f)
    if args.update:
        update(args.baseline, counts, old, args.why.strip(), args.build, bool(args.paths))
        return 0
    if not old:
        fail(f"{args.baseline} not found: make one with --update --why \"first baseline\"")
    now_toolchain = toolchain(args.build)
    if old.get("toolchain") != now_toolchain:
        print(f"note: the baseline was counted with {old.get('toolchain')}; this build is {now_toolchain}: "
              "a difference may be the toolchain's, not the code's")
    grown, missing = compare(counts, old, old.get("tolerance_percent", TOLERANCE), bool(args.paths))
    if grown:
        print(f"\ninstructions.py: {len(grown)} count(s) grew more than {old.get('tolerance_percent', TOLERANCE):g} %:",
              file=sys.stderr)
        for name, was, now, change in grown:
            print(f"  {name}: {was:.1f} -> {now:.1f} instructions per operation ({change:+.2f} %)", file=sys.stderr)
        print("If the growth is intended, the same change updates the baseline, saying why:\n"
              "  python3 bench/instructions.py --update --why \"<what changed and why it is worth it>\"",
              file=sys.stderr)
        return 1
    if missing:
        print(f"instructions.py: measured paths and baseline differ ({', '.join(missing)}): "
              "--update --why \"...\" records the new set", file=sys.stderr)
        return 1
    print(f"\nall {len(counts)} counts within {old.get('tolerance_percent', TOLERANCE):g} % of the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
