#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns one grading run into Gradescope's results/results.json (scripts/gradescope.sh's autograder).

  python3 scripts/gradescope_results.py EXERCISE GRADE_DIR RESULTS_JSON

GRADE_DIR is what the grader wrote: report.json and output.txt of scripts/grade-exercise.sh (02..06),
or report.json of scripts/grade.sh NAME --class (01). Each requirement the grader judged is one test
worth one point (Gradescope's documented format: https://gradescope-autograders.readthedocs.io,
"Autograder Specifications"): for 02..06 every `ok` / `FAIL` line of the check, for 01 every
conformance rule in each build and the pool's own tests. A submission that does not compile gets
one test, "it compiles", 0 of 1, with the compiler's message: the score is 0. The top-level score is
the sum of the tests' scores; the verdict line goes to `output`.
"""
import json
import os
import sys


def tests_of_check(grade_dir):
    text = open(os.path.join(grade_dir, "output.txt"), errors="replace").read()
    report = json.load(open(os.path.join(grade_dir, "report.json")))
    tests = []
    missing = [l[8:] for l in text.splitlines() if l.startswith("  FAIL  not handed in: ")]
    if missing:  # scripts/place-submission.sh found no such file in the upload
        return [{"name": m, "score": 0, "max_score": 1, "status": "failed",
                 "output": f"{m}: upload it (see the exercise page's What to hand in)", "visibility": "visible"}
                for m in missing], False
    for line in text.splitlines():
        if line.startswith("  ok    ") or line.startswith("  FAIL  "):
            passed = line.startswith("  ok")
            tests.append({"name": line[8:][:200], "score": 1 if passed else 0, "max_score": 1,
                          "status": "passed" if passed else "failed", "output": line[8:], "visibility": "visible"})
    if any("does not compile" in t["name"] or "configure failed" in t["output"] for t in tests) or not tests:
        log = os.path.join(grade_dir, "build.log")
        message = open(log, errors="replace").read()[-4000:] if os.path.exists(log) else text[-4000:]
        tests = [{"name": "it compiles", "score": 0, "max_score": 1, "status": "failed",
                  "output": message, "visibility": "visible"}]
    return tests, report.get("passed", False)


def tests_of_card(grade_dir):
    card = json.load(open(os.path.join(grade_dir, "report.json")))
    if "builds" not in card:  # scripts/place-submission.sh found no pool.hpp: the check's way
        return tests_of_check(grade_dir)
    if not any(b["built"] for b in card["builds"].values()):
        message = "\n".join(f"{kind}:\n{b['log']}" for kind, b in card["builds"].items())[-4000:]
        return [{"name": "it compiles", "score": 0, "max_score": 1, "status": "failed", "output": message,
                 "visibility": "visible"}], False
    tests = []
    for kind, b in card["builds"].items():
        if not b["built"]:
            tests.append({"name": f"{kind} build", "score": 0, "max_score": 1, "status": "failed",
                          "output": b["log"][-2000:], "visibility": "visible"})
    for rule, by in card["conformance"].items():
        for kind in ("release", "asan", "tsan"):
            r = by.get(kind)
            if r is None:
                tests.append({"name": f"{rule} ({kind})", "score": 0, "max_score": 1, "status": "failed",
                              "output": f"not run: the {kind} build failed", "visibility": "visible"})
                continue
            tests.append({"name": f"{rule} ({kind})", "score": 1 if r["passed"] else 0, "max_score": 1,
                          "status": "passed" if r["passed"] else "failed", "output": r["excerpt"],
                          "visibility": "visible"})
    for kind, t in card["tests"].items():
        if t is not None:
            tests.append({"name": f"the pool's own tests ({kind})", "score": 1 if t["passed"] else 0, "max_score": 1,
                          "status": "passed" if t["passed"] else "failed", "output": t["excerpt"],
                          "visibility": "visible"})
    return tests, bool(card.get("conformance_clean"))


def main():
    if len(sys.argv) != 4:
        print("usage: gradescope_results.py EXERCISE GRADE_DIR RESULTS_JSON", file=sys.stderr)
        return 2
    exercise, grade_dir, results = sys.argv[1:]
    if not os.path.exists(os.path.join(grade_dir, "report.json")):
        tests, passed = [{"name": "grading finished", "score": 0, "max_score": 1, "status": "failed",
                          "output": "the grader wrote no report (stopped by its time limit?)",
                          "visibility": "visible"}], False
    elif exercise == "01-first-pool":
        tests, passed = tests_of_card(grade_dir)
    else:
        tests, passed = tests_of_check(grade_dir)
    score = sum(t["score"] for t in tests)
    total = sum(t["max_score"] for t in tests)
    os.makedirs(os.path.dirname(os.path.abspath(results)), exist_ok=True)
    with open(results, "w") as f:
        json.dump({"score": score, "output": f"{'PASS' if passed else 'FAIL'}: exercise {exercise}, "
                   f"{score} of {total} requirements met", "visibility": "visible", "tests": tests}, f, indent=2)
    print(f"gradescope: {score} / {total} -> {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
