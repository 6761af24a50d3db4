#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Publishes a complete comparison run into docs/results/: the numbers the READMEs quote.

  ./scripts/compare.sh --full && scripts/publish-results.py && scripts/fill-numbers.py

Copies bench/results/latest/ (what compare.sh wrote) to docs/results/:
  results.md, results.png, results.json -> comparison.md, comparison.png, comparison.json
  http/http.md, http/http.json          -> http.md, http.json
and heads http.md with the run's command, commit, date and machine (results.md has them already);
http.json gets the commit and machine in its meta, for the pages' "measured at" lines. The ladder
(textbook against tuned pools) is then remade from the new comparison.json by bench/ladder.py:
ladder.md and records/ladder.json, which docs/optimizations.md shows.
Refuses a quick run (its numbers are a first look, not a publication) and a run whose commit is not
HEAD, so a published table always names the code that made it; with --changed-since-ok a run of an
earlier commit is published with the list of files changed since written under its header (for
commits that change only docs or comments). Exit 2 with the reason.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg):
    print(f"publish-results: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", default=os.path.join(ROOT, "bench", "results", "latest"),
                    help="the folder compare.sh wrote (default bench/results/latest)")
    ap.add_argument("--to", default=os.path.join(ROOT, "docs", "results"), help="default docs/results")
    ap.add_argument("--changed-since-ok", action="store_true",
                    help="publish a run of an earlier commit, listing the files changed since")
    args = ap.parse_args()

    results = os.path.join(args.run, "results.json")
    if not os.path.exists(results):
        fail(f"no {os.path.relpath(results, ROOT)}: run ./scripts/compare.sh --full first")
    run = json.load(open(results))
    meta = run.get("meta", {})
    if run.get("quick"):
        fail("this is a quick run (a first look); publish a ./scripts/compare.sh --full run")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    commit = meta.get("commit", "")
    since = ""
    if not (commit and (head.startswith(commit) or commit.startswith(head))):
        if not commit or not args.changed_since_ok:
            fail(f"the run is of commit {commit or '(unknown)'}, HEAD is {head}: run it again on HEAD "
                 "(or --changed-since-ok when the commits since change no measured code)")
        changed = subprocess.run(["git", "diff", "--name-only", commit, "HEAD"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.split()
        since = (f"Files changed between the measured commit {commit} and {head}, where this was published: "
                 + ", ".join(f"`{c}`" for c in changed) + ".\n\n")
    http_md = os.path.join(args.run, "http", "http.md")
    if not os.path.exists(http_md):
        fail(f"no {os.path.relpath(http_md, ROOT)}: the HTTP comparison did not run (is wrk installed?)")

    os.makedirs(args.to, exist_ok=True)
    for ext in ("png", "json"):
        shutil.copyfile(os.path.join(args.run, f"results.{ext}"), os.path.join(args.to, f"comparison.{ext}"))
    # results.md: its title, then the files changed since the run (if any), then the rest.
    title, _, rest = open(os.path.join(args.run, "results.md")).read().partition("\n\n")
    with open(os.path.join(args.to, "comparison.md"), "w") as f:
        f.write(title + "\n\n" + since + rest)
    # http.json gets the run's commit and machine, which bench/http/run.py does not know: the
    # "measured at" line of a page generated from it (scripts/fill-numbers.py) names them.
    http_run = json.load(open(os.path.join(args.run, "http", "http.json")))
    http = http_run.setdefault("meta", {})
    http.update({"commit": commit, "cpu": meta.get("cpu", ""), **({"machine": meta["machine"]} if meta.get("machine") else {})})
    with open(os.path.join(args.to, "http.json"), "w") as f:
        json.dump(http_run, f, indent=2)
    body = open(http_md).read()
    with open(os.path.join(args.to, "http.md"), "w") as f:
        f.write("# pools: HTTP comparison against nginx\n\n"
                f"{http.get('time', '')} · {meta.get('cpu', '')} · commit {commit} · "
                f"`{http.get('command', '')}` ({http.get('repeat')} interleaved rounds of "
                f"{http.get('duration_s')}-second runs, medians), made by `./scripts/compare.sh --full` "
                "after the bench run in [comparison.md](comparison.md).\n\n" + since + body)
    # The ladder is a view of the same run: remade from it, never measured apart (ctest
    # bench_ladder_record fails when the two differ).
    cmp_json = os.path.relpath(os.path.join(args.to, "comparison.json"), ROOT)
    ladder_md, ladder_json = (os.path.relpath(os.path.join(args.to, p), ROOT) for p in ("ladder.md", "records/ladder.json"))
    os.makedirs(os.path.join(args.to, "records"), exist_ok=True)
    with open(os.path.join(ROOT, ladder_md), "w") as f:
        subprocess.run([sys.executable, "bench/ladder.py", cmp_json], cwd=ROOT, stdout=f, check=True)
    subprocess.run([sys.executable, "bench/ladder.py", "--record", ladder_json, cmp_json], cwd=ROOT, check=True)
    for name in ("comparison.md", "comparison.png", "comparison.json", "http.md", "http.json", "ladder.md",
                 "records/ladder.json"):
        print(os.path.relpath(os.path.join(args.to, name), ROOT))
    print("now scripts/fill-numbers.py: every page's generated numbers from the new files (ctest docs_numbers)")


if __name__ == "__main__":
    main()
