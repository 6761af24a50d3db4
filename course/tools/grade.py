#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Grades one pool: the report card of a course assignment (scripts/grade.sh is the command).

  scripts/grade.sh NAME [--out DIR] [--no-bench] [--no-http] [--timeout S] [--class]

1. Builds the variant under release, asan (ASan + UBSan) and tsan. The sanitizer builds configure
   only NAME (-DPOOLS_VARIANTS=NAME, in build-grade-asan/ and build-grade-tsan/); the release build
   is the project's build/ (the comparison needs the other pools and the references).
2. Runs the conformance suite one contract rule at a time (each doctest case in its own process,
   with a time limit, so a crash or a hang fails that rule only and the others are still judged),
   and the variant's own tests, in each build. Each failing rule is named, with the first lines
   of its failure.
3. Runs a short bench beside the textbook pools, the tuned pools and the references
   (bench/compare.py --quick: fib, skynet, submit, wakeup) and a short HTTP run beside the tuned
   pools' servers and nginx (bench/http/run.py: /plaintext and /sleep, 3 s each).
4. Writes the report card to DIR (default grade/NAME/): report.md (one page) and report.json,
   and prints report.md.

--class grades what the verdict depends on and nothing else, for a class of students
(scripts/grade-class.sh): step 1 builds only NAME in all three builds (the release build too goes
to its own folder, build-grade-release/, configured with -DPOOLS_VARIANTS=NAME and no bench), and
steps 3 (bench, HTTP) are left out. The verdict is the same; the card has no comparison rows.

Exit status: 0 only when every conformance rule and the variant's tests pass in all three builds
(clean under both sanitizers); 1 otherwise; 2 for a bad argument (unknown variant).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "http"))
import run as http_bench  # noqa: E402  (bench/http/run.py: the /sleep scenario's numbers)
BUILDS = {  # build -> (preset, folder, extra configure flags, environment for the tests)
    "release": ("release", "build", [], {"POOLS_SANITIZED": "0"}),
    "asan": ("asan", "build-grade-asan", ["-DPOOLS_BUILD_BENCH=OFF"],
             {"POOLS_SANITIZED": "1", "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=1",
              "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}),
    "tsan": ("tsan", "build-grade-tsan", ["-DPOOLS_BUILD_BENCH=OFF"],
             {"POOLS_SANITIZED": "1", "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1:"
              f"suppressions={os.path.join(ROOT, 'cmake', 'tsan.supp')}"}),
}
TEXTBOOK_AND_TUNED = ["futures", "coroutines", "fibers", "reactor"]
WORKLOADS = ["fib", "skynet", "submit", "wakeup"]


def log(msg):
    print(f"[grade] {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    log(" ".join(cmd))
    return subprocess.run(cmd, cwd=ROOT, **kw)


def build(name, kind, jobs):
    preset, folder, flags, _ = BUILDS[kind]
    cfg = ["cmake", "--preset", preset, "-B", folder, "-DPOOLS_WERROR=ON"] + flags
    only_name = kind != "release" or folder != "build"  # --class: the release build too
    if only_name:
        cfg.append(f"-DPOOLS_VARIANTS={name}")
    p = run(cfg, capture_output=True, text=True)
    if p.returncode == 0:
        targets = [] if not only_name else ["--target", f"conformance_{name}", f"course_01_threads_{name}"] + (
            [f"tests_{name}"] if os.path.isdir(os.path.join(ROOT, "variants", name, "tests")) else [])
        p = run(["cmake", "--build", folder, "-j", str(jobs)] + targets, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout + p.stderr)[-3000:]


def rule_of(case):
    """'conformance: 8 threads post at once<pools::x::pool>' -> ('8 threads post at once', 'pools::x::pool')."""
    m = re.match(r"conformance: (.*)<(.*)>$", case)
    return (m.group(1), m.group(2)) if m else (case, "")


def failure_excerpt(text, lines=6):
    keep = [l for l in text.splitlines()
            if re.search(r"ERROR|FATAL|what\(\)|not implemented|Sanitizer|data race|deadlock|CHECK|REQUIRE|"
                         r"timed out|exception|Aborted", l)]
    return "\n".join((keep or text.splitlines()[-lines:])[:lines])


def run_case(exe, case, env, timeout):
    # doctest filters split on commas and treat * and ? as wildcards: a comma in a name becomes ?.
    pattern = case.replace(",", "?")
    start = time.monotonic()
    try:
        p = subprocess.run([exe, f"--test-case={pattern}", "--no-version", "--duration=false"], cwd=ROOT,
                           env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout)
        ok, out = p.returncode == 0, p.stdout + p.stderr
        if ok and "test cases:      0" in out.replace("  ", " ").replace("test cases:  ", "test cases:      "):
            ok, out = False, "the case did not run (filter matched nothing)\n" + out
    except subprocess.TimeoutExpired as e:
        ok = False
        out = f"timed out after {timeout} s: a hang (a lost wake-up? a deadlock? a drain that never ends?)\n" + (
            (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""))
    return {"passed": ok, "seconds": round(time.monotonic() - start, 1), "excerpt": "" if ok else failure_excerpt(out)}


def conformance(name, kind, timeout):
    _, folder, _, env = BUILDS[kind]
    exe = os.path.join(ROOT, folder, "variants", name, f"conformance_{name}")
    listing = subprocess.run([exe, "--list-test-cases", "--no-version"], capture_output=True, text=True)
    cases = [l.strip() for l in listing.stdout.splitlines() if l.strip().startswith("conformance:")]
    results = {}
    for case in cases:
        log(f"{kind}: {case}")
        results[case] = run_case(exe, case, env, timeout)
    # The course's rule the suite does not state (course/exercises/01-first-pool/threads_check.cpp):
    # the tasks run on the pool's own threads, two at once; an inline "pool" passes every other rule.
    threads_exe = os.path.join(ROOT, folder, "course", f"course_01_threads_{name}")
    if os.path.exists(threads_exe):
        case = f"conformance: tasks run on the pool's own threads, concurrently<pools::{name}::pool>"
        log(f"{kind}: {case}")
        start = time.monotonic()
        try:
            p = subprocess.run([threads_exe], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True,
                               timeout=timeout)
            ok, out = p.returncode == 0, p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            ok, out = False, f"timed out after {timeout} s"
        fails = [l.strip()[6:] for l in out.splitlines() if l.strip().startswith("FAIL  ")]
        results[case] = {"passed": ok, "seconds": round(time.monotonic() - start, 1),
                         "excerpt": "" if ok else "\n".join(fails[:4]) or failure_excerpt(out)}
    tests_exe = os.path.join(ROOT, folder, "variants", name, f"tests_{name}")
    own = None
    if os.path.exists(tests_exe):
        log(f"{kind}: tests_{name}")
        own = run_case(tests_exe, "*", env, timeout * 3)
    return results, own


def bench(name, out):
    subjects = [name] + [f"{v}/textbook" for v in TEXTBOOK_AND_TUNED if v != name] + \
               [v for v in TEXTBOOK_AND_TUNED if v != name] + ["tbb", "asio_pool"]
    listing = open(os.path.join(ROOT, "build", "pools_variants.txt")).read().split()
    subjects = [s for s in subjects if s.split("/")[0] in listing or s in ("tbb", "asio_pool")]
    cmd = [sys.executable, "bench/compare.py", "--build", "build", "--out", out, "--quick", "--threads", "2",
           "--rounds", "3", "--subjects", ",".join(subjects), "--workloads", ",".join(WORKLOADS), "--timeout", "120"]
    p = run(cmd)
    path = os.path.join(out, "results.json")
    return (json.load(open(path)) if os.path.exists(path) else None), " ".join(cmd), p.returncode


def http(name, out):
    listing = open(os.path.join(ROOT, "build", "pools_variants.txt")).read().split()
    servers = [name] + [v for v in TEXTBOOK_AND_TUNED if v != name and v in listing]
    cmd = [sys.executable, "bench/http/run.py", "--build", "build", "--out", out, "--servers", *servers,
           "--scenarios", "plaintext", "sleep", "--duration", "3", "--warmup", "1", "--repeat", "1"]
    p = run(cmd, stdout=subprocess.DEVNULL)
    path = os.path.join(out, "http.json")
    return (json.load(open(path)) if os.path.exists(path) else None), " ".join(cmd), p.returncode


def code_lines(name):
    """The pool's code lines as cloc counts them (no comments, no blank lines): the measure of the
    textbook pools' 150-line budget (README), shown on the card, not graded."""
    dirs = [d for d in (os.path.join("variants", name, "include"), os.path.join("variants", name, "src"))
            if os.path.isdir(os.path.join(ROOT, d))]
    p = subprocess.run(["cloc", "--json", "--quiet", *dirs], cwd=ROOT, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)["SUM"]["code"]
    except (ValueError, KeyError):
        return None


MEASURE = {"fib": ("median_ns", "tbb"), "skynet": ("median_ns", "tbb"),
           "submit": ("ns_per_task", "asio_pool"), "wakeup": ("p50_ns", "asio_pool")}


def value(record, workload):
    if not record or not record.get("supported"):
        return None
    key = MEASURE[workload][0]
    return record["median_ns"] if key == "median_ns" else record.get("metrics", {}).get(key)


def bench_table(results, name):
    by = {(r["variant"], r["workload"]): r for r in results["records"]}
    subjects = list(dict.fromkeys(r["variant"] for r in results["records"]))
    rows, data = [], {}
    head = "| subject | " + " | ".join(f"{w} ÷{MEASURE[w][1]}" for w in WORKLOADS) + " |"
    rows += [head, "|---" * (len(WORKLOADS) + 1) + "|"]
    for s in subjects:
        cells = []
        for w in WORKLOADS:
            v, ref = value(by.get((s, w)), w), value(by.get((MEASURE[w][1], w)), w)
            ratio = v / ref if v is not None and ref else None
            data.setdefault(s, {})[w] = ratio
            cells.append(f"{ratio:.2f}" if ratio is not None else "n/s" if (s, w) in by else "—")
        label = f"**{s}**" if s == name else s
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return rows, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("name")
    ap.add_argument("--out")
    ap.add_argument("--no-bench", action="store_true", help="skip the bench (conformance only)")
    ap.add_argument("--no-http", action="store_true", help="skip the HTTP run")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per conformance rule (release; x3 sanitized)")
    ap.add_argument("--class", dest="class_mode", action="store_true",
                    help="conformance in the three builds of NAME alone; no bench, no HTTP (grade-class.sh)")
    args = ap.parse_args()
    if args.class_mode:
        args.no_bench = args.no_http = True
        BUILDS["release"] = ("release", "build-grade-release", ["-DPOOLS_BUILD_BENCH=OFF"], BUILDS["release"][3])
    name = args.name
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not os.path.exists(os.path.join(ROOT, "variants", name, "CMakeLists.txt")):
        known = sorted(d for d in os.listdir(os.path.join(ROOT, "variants"))
                       if os.path.exists(os.path.join(ROOT, "variants", d, "CMakeLists.txt")))
        print(f"grade: no variant '{name}' (variants/{name}/CMakeLists.txt); known: {', '.join(known)}", file=sys.stderr)
        return 2
    out = args.out or os.path.join(ROOT, "grade", name)
    os.makedirs(out, exist_ok=True)
    jobs = int(os.environ.get("POOLS_BUILD_JOBS") or os.cpu_count() or 2)  # grade-class.sh: 1 per student
    started = time.monotonic()
    card = {"variant": name, "builds": {}, "conformance": {}, "tests": {}}

    phases = card["phases"] = {}  # seconds per step, so a slow grade says where its time went

    def timed(label, step, *a):
        t = time.monotonic()
        result = step(*a)
        phases[label] = round(time.monotonic() - t)
        return result

    for kind in BUILDS:
        ok, text = timed(f"{kind} build", build, name, kind, jobs)
        card["builds"][kind] = {"built": ok, "log": "" if ok else text}
        if not ok:
            log(f"{kind}: build failed")
            continue
        timeout = args.timeout * (1 if kind == "release" else 3)
        rules, own = timed(f"{kind} conformance", conformance, name, kind, timeout)
        for case, res in rules.items():
            rule, typ = rule_of(case)
            card["conformance"].setdefault(f"{rule} [{typ}]", {})[kind] = res
        card["tests"][kind] = own

    clean = (all(b["built"] for b in card["builds"].values()) and card["conformance"]
             and all(all(r.get(k, {}).get("passed") for k in BUILDS) for r in card["conformance"].values())
             and all(t is None or t["passed"] for t in card["tests"].values()))
    card["conformance_clean"] = bool(clean)
    card["code_lines"] = code_lines(name)

    bench_rows, http_rows = [], []
    if not args.no_bench and card["builds"]["release"]["built"]:
        results, cmd, _ = timed("bench", bench, name, os.path.join(out, "bench"))
        if results:
            bench_rows, card["bench_ratios"] = bench_table(results, name)
            card["bench_command"] = cmd
    if not args.no_http and not args.no_bench and card["builds"]["release"]["built"] and shutil.which("wrk"):
        results, cmd, _ = timed("http", http, name, os.path.join(out, "http"))
        if results:
            card["http"] = results["results"]
            card["http_command"] = cmd
            http_rows = ["| server | scenario | req/s | ratio | p99 ms |", "|---|---|---:|---:|---:|"]
            for r in results["results"]:
                ratio = f"{r['ratio']:.2f}" if r.get("ratio") is not None else "—"
                p99 = f"{r['p99_ms']:.3f}" if r.get("p99_ms") is not None else "—"
                label = f"**{r['server']}**" if r["server"] == name else r["server"]
                http_rows.append(f"| {label} | {r['scenario']} | {r['requests_per_s']:,.0f} | {ratio} | {p99} |")
    card["seconds"] = round(time.monotonic() - started)

    md = [f"# Report card: {name}", "",
          f"**{'PASS' if clean else 'FAIL'}**: conformance {'clean' if clean else 'not clean'} under release, "
          f"asan (ASan+UBSan) and tsan. Graded in {card['seconds']} s "
          f"({', '.join(f'{k} {v} s' for k, v in phases.items())}).", "",
          f"Size: {card['code_lines']} code lines (cloc, comments and blank lines not counted; the textbook "
          "pools' budget is 150).", "",
          "## Conformance, one contract rule at a time", "",
          "| rule | release | asan | tsan |", "|---|---|---|---|"]
    for rule, by_kind in card["conformance"].items():
        cells = ["pass" if by_kind.get(k, {}).get("passed") else "—" if k not in by_kind else "**FAIL**" for k in BUILDS]
        md.append(f"| {rule} | " + " | ".join(cells) + " |")
    own = ["pass" if t and t["passed"] else "—" if t is None else "**FAIL**" for t in (card["tests"].get(k) for k in BUILDS)]
    md.append(f"| the variant's own tests (tests_{name}) | " + " | ".join(own) + " |")
    for kind, b in card["builds"].items():
        if not b["built"]:
            md += ["", f"**{kind} build failed**:", "```", failure_excerpt(b["log"], 15), "```"]
    failures = [(rule, k, r["excerpt"]) for rule, by_kind in card["conformance"].items() for k, r in by_kind.items()
                if not r["passed"]]
    failures += [(f"tests_{name}", k, t["excerpt"]) for k, t in card["tests"].items() if t and not t["passed"]]
    if failures:
        md += ["", "### What failed", ""]
        for rule, kind, excerpt in failures[:12]:
            md += [f"- **{rule}** ({kind}):", "  ```", *("  " + l for l in excerpt.splitlines()), "  ```"]
    if bench_rows:
        md += ["", "## Bench: ratio to the reference in the same run (below 1 is better)", "", *bench_rows, "",
               f"Command: `{card['bench_command']}` (quick: one repetition; the noise floor and every value are in "
               f"{os.path.relpath(os.path.join(out, 'bench', 'results.md'), ROOT)})."]
    if http_rows:
        md += ["", "## HTTP: one server thread; ratio to nginx (sleep: to Little's law)", "", *http_rows, "",
               f"Command: `{card['http_command']}`."]
        note = http_bench.blocking_sleep_note(sorted({r["server"] for r in card["http"] if r["scenario"] == "sleep"}))
        if note:
            md += ["", note]
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(card, f, indent=2)
    print(text)
    log(f"wrote {os.path.relpath(out, ROOT)}/report.md and report.json")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
