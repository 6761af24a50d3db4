#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns one grading run into Gradescope's results/results.json (scripts/gradescope.sh's autograder).

  python3 course/tools/gradescope_results.py EXERCISE GRADE_DIR RESULTS_JSON

GRADE_DIR is what the grader wrote: report.json and output.txt of scripts/grade-exercise.sh (01..07;
01 on the pool), or report.json of scripts/grade.sh NAME --class (the report card of 01, kept
for a card graded by hand). The tests are Gradescope's documented format
(https://gradescope-autograders.readthedocs.io, "Autograder Specifications"): for 01..07 the tests
of the exercise's fixed rubric (course/exercises/<id>/rubric.json), with their max_score, as
course/tools/grade_run.py scored them from the check's result channel (never from printed lines); a
submission the static check refuses or that does not compile scores 0 on every one, with the
reason (the compiler's message). For 01 every conformance rule in each build and the pool's own
tests, one point each. The top-level score is the sum of the tests' scores; the verdict line, and
the written answers' points (graded by hand), go to `output`.
"""
import json
import os
import sys


def tests_of_rubric(grade_dir):
    """02..07: the tests of the exercise's rubric.json, as course/tools/grade_run.py scored them."""
    report = json.load(open(os.path.join(grade_dir, "report.json")))
    tests = []
    for t in report["tests"]:
        output = t["output"]
        if not t["passed"] and output.startswith("not run: ") and report.get("failures"):
            output += "\n" + "\n".join(report["failures"][:5])
        tests.append({"name": t["name"], "score": t["score"], "max_score": t["max_score"],
                      "status": "passed" if t["passed"] else "failed", "output": output[-4000:],
                      "visibility": "visible"})
    log = os.path.join(grade_dir, "build.log")
    if any("does not compile" in f for f in report.get("failures", [])) and os.path.exists(log):
        tests[0]["output"] = open(log, errors="replace").read()[-4000:]
    return tests, report.get("passed", False), report.get("answers_points", 0)


def tests_of_lines(grade_dir):
    """No report of the grader: the FAIL lines of what ran (a file not handed in, or refused)."""
    text = open(os.path.join(grade_dir, "output.txt"), errors="replace").read()
    fails = [line[8:] for line in text.splitlines() if line.startswith("  FAIL  ")] or ["the grader did not run"]
    return [{"name": f[:200], "score": 0, "max_score": 1, "status": "failed", "output": f,
             "visibility": "visible"} for f in fails], False, 0


def tests_of_card(grade_dir):
    card = json.load(open(os.path.join(grade_dir, "report.json")))
    if "builds" not in card:  # course/tools/place-submission.sh found no pool.hpp, or refused it
        return tests_of_lines(grade_dir)
    if not any(b["built"] for b in card["builds"].values()):
        message = "\n".join(f"{kind}:\n{b['log']}" for kind, b in card["builds"].items())[-4000:]
        return [{"name": "it compiles", "score": 0, "max_score": 1, "status": "failed", "output": message,
                 "visibility": "visible"}], False, 10
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
    return tests, bool(card.get("conformance_clean")), 10


def main():
    if len(sys.argv) != 4:
        print("usage: gradescope_results.py EXERCISE GRADE_DIR RESULTS_JSON", file=sys.stderr)
        return 2
    exercise, grade_dir, results = sys.argv[1:]
    if not os.path.exists(os.path.join(grade_dir, "report.json")):
        tests, passed, answers = [{"name": "grading finished", "score": 0, "max_score": 1, "status": "failed",
                                   "output": "the grader wrote no report (stopped by its time limit?)",
                                   "visibility": "visible"}], False, 0
    elif "tests" in json.load(open(os.path.join(grade_dir, "report.json"))):
        tests, passed, answers = tests_of_rubric(grade_dir)
    elif exercise == "01-first-pool":
        tests, passed, answers = tests_of_card(grade_dir)
    else:
        tests, passed, answers = tests_of_lines(grade_dir)
    score = sum(t["score"] for t in tests)
    total = sum(t["max_score"] for t in tests)
    os.makedirs(os.path.dirname(os.path.abspath(results)), exist_ok=True)
    with open(results, "w") as f:
        json.dump({"score": score, "output": f"{'PASS' if passed else 'FAIL'}: exercise {exercise}, "
                   f"{score} of {total} code points"
                   + (f"; the written answers ({answers} points) are graded by hand: "
                      + ("ANSWERS.md handed in" if os.path.exists(os.path.join(grade_dir, "ANSWERS.md"))
                         else "no ANSWERS.md handed in") if answers else ""),
                   "visibility": "visible", "tests": tests}, f, indent=2)
    print(f"gradescope: {score} / {total} -> {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
