#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs an exercise's check program and scores it on the exercise's fixed rubric.

  python3 course/tools/grade_run.py run EXERCISE EXE OUT_DIR [--timeout S] [--quiet] [--isolated] [-- ARG...]
  python3 course/tools/grade_run.py zero EXERCISE OUT_DIR REASON [--output FILE]
  python3 course/tools/grade_run.py selftest EXERCISE FILES_DIR EXE (start|solution|REGEX) [--timeout S]

The rubric is course/exercises/EXERCISE/rubric.json: the named tests, each with its max_score, the
same on every run; their sum is the code's share of the exercise, "answers_points" the written
answers' share (graded by hand, scripts/grade-class.sh and Gradescope show it as such).

run: the grader's side of the result channel (course/common/course/check.hpp). A pipe is made, its
write end passed to the check as COURSE_RESULT_FD with a fresh random nonce in COURSE_RESULT_NONCE;
the check's harness writes one JSON line per finished test, each carrying the nonce, and a last
line with its verdict. A test scores its max_score when the harness reported it passed, and a
measured test (a speed test, report.partial) the share of it the harness reported ("thousandths",
0..1000), rounded to a tenth of a point; a test it never reported (the check crashed, hung, or
stopped earlier) scores 0. The run scores 0 in all
when the channel cannot be trusted: a line without the nonce, a test name not in the rubric or
reported twice, an exit status that disagrees with the verdict (0 without the harness's PASS),
a PASS that leaves a rubric test out. What the process prints is kept in OUT_DIR/output.txt for
the student to read (and echoed unless --quiet); it never counts.
--isolated: the check runs through course/tools/grade-sandbox.sh (as the user pools-grader, in its own
namespaces, read-only but for a scratch folder, no network, limits); this script stays outside,
and the pipe's write end is the only thing of the grader's the check holds. What the program
prints is kept up to 1 MiB.
zero: a run that did not happen (the static check refused the files, they do not compile): every
test 0, with REASON.
Both write OUT_DIR/report.json: exercise, passed (every test passed), score, max_score,
answers_points, tests [{name, max_score, score, passed, output}], failures, exit_code, seconds.
Exit 0 when every test passed, 1 otherwise, 2 for a bad argument.

selftest (cmake/course.cmake's tests): the static check on FILES_DIR's copies of the exercise's
files, then the run, as the graders do; "start" passes when the score is at most 25 % of the code
points and the start's EXPECT_FAILURE reason is shown, "solution" when the score is full, REGEX
(a cheat) when the score is not full and REGEX is in the output or the reasons. "start" also
requires 0 on every hidden test of the rubric: each hidden test can fail.
"""
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def load_rubric(exercise):
    path = os.path.join(ROOT, "course", "exercises", exercise, "rubric.json")
    if not os.path.exists(path):
        raise SystemExit(f"grade_run.py: exercise {exercise} has no rubric ({path})")
    rubric = json.load(open(path))
    names = [t["name"] for t in rubric.get("tests", [])]
    if len(set(names)) != len(names) or any(re.search(r"\d{3,}|\d+ ?(ms|s)\b", n) and "1000" not in n
                                            for n in names):
        raise SystemExit(f"grade_run.py: {path}: test names must be distinct and fixed")
    return rubric


def write_report(exercise, rubric, out_dir, results, reasons, rc, seconds):
    """results: name -> (passed, output, thousandths of the points earned); reasons: why the run as a
    whole failed (if it did). A measured test (a speed test) earns a share of its points: rounded
    to a tenth of a point."""
    tests, failures = [], list(reasons)
    for t in rubric["tests"]:
        passed, output, share = results.get(t["name"], (False, None, 0))
        ran = output is not None
        if reasons:
            passed = False
        if not ran and t.get("hidden") and not reasons:
            output = (f"not run here: a hidden test ({t['max_score']} points), run by your instructor's grader "
                      f"(its workload is not in the hand-out)")
        elif not ran:
            output = "not run: " + (reasons[0] if reasons else "the check stopped before this test")
        elif reasons:
            output = f"scored 0: {reasons[0]}\n{output}"
        score = t["max_score"] if passed else 0 if reasons or not ran else round(t["max_score"] * share / 1000, 1)
        score = int(score) if score == int(score) else score
        tests.append({"name": t["name"], "max_score": t["max_score"], "score": score,
                      "passed": passed, "output": output,
                      "hidden_not_run": bool(t.get("hidden")) and not ran and not reasons})
        if not passed and not reasons and not (t.get("hidden") and not ran):  # reasons: said for all at once
            failures += [line[6:] for line in output.splitlines() if line.startswith(("FAIL  ", "PART  "))] if ran else \
                [f"not run: {t['name']}"]
    seen, unique = set(), []
    for f in failures:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    score = round(sum(t["score"] for t in tests), 1)
    score = int(score) if score == int(score) else score
    # A hidden test not compiled in (a hand-out) does not fail the verdict: the instructor's grader runs it.
    report = {"exercise": exercise, "passed": all(t["passed"] or t["hidden_not_run"] for t in tests), "score": score,
              "max_score": sum(t["max_score"] for t in tests), "answers_points": rubric.get("answers_points", 0),
              "tests": tests, "failures": unique, "exit_code": rc, "seconds": round(seconds, 1)}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    return report


def summary(report):
    lines = [f"score: {report['score']} of {report['max_score']} code points "
             f"(+ {report['answers_points']} for the written answers, graded by hand)"]
    for t in report["tests"]:
        hidden = " (hidden: not run here; your instructor's grader runs it)" if t["output"].startswith(
            "not run here: a hidden test") else ""
        lines.append(f"  {t['score']:>3} / {t['max_score']:<3} {t['name']}{hidden}")
    return "\n".join(lines)


OUTPUT_LIMIT = 1 << 20


def run_check(exercise, exe, out_dir, timeout, quiet, args, isolated=False):
    rubric = load_rubric(exercise)
    nonce = secrets.token_hex(16)
    read_fd, write_fd = os.pipe()
    env = dict(os.environ, COURSE_RESULT_FD=str(write_fd), COURSE_RESULT_NONCE=nonce)
    os.makedirs(out_dir, exist_ok=True)
    started = time.monotonic()
    channel = []

    def drain():
        with os.fdopen(read_fd, "rb") as r:
            channel.append(r.read())

    reader = threading.Thread(target=drain)
    reader.start()
    rc, timed_out, sandbox_reasons = None, False, []
    with open(os.path.join(out_dir, "output.txt"), "wb") as output:
        try:
            # A cross build's program runs under its emulator (POOLS_TEST_EMULATOR, cmake/pools.cmake:
            # the arm64 preset's "qemu-aarch64 -L /"); empty or unset: directly.
            command = os.environ.get("POOLS_TEST_EMULATOR", "").split() + [os.path.abspath(exe)] + args
            if isolated:
                sanitized = ["--sanitized"] if "ASAN_OPTIONS" in env or "TSAN_OPTIONS" in env else []
                command = [os.path.join(ROOT, "course", "tools", "grade-sandbox.sh"), "--limits", "run"] + sanitized + \
                    ["--"] + command
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    pass_fds=(write_fd,), start_new_session=True)
        except OSError as e:
            os.close(write_fd)
            reader.join()
            return write_report(exercise, rubric, out_dir, {}, [f"the check program did not start: {e}"], -1, 0)
        os.close(write_fd)
        deadline = started + timeout

        def pump():
            kept = 0
            for chunk in iter(lambda: proc.stdout.read1(65536), b""):
                if kept >= OUTPUT_LIMIT:
                    continue  # read on, so that the program is not blocked; keep no more
                chunk = chunk[:OUTPUT_LIMIT - kept]
                kept += len(chunk)
                if kept >= OUTPUT_LIMIT:
                    chunk += b"\n[output cut at 1 MiB]\n"
                output.write(chunk)
                output.flush()
                if not quiet:
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.flush()

        pumper = threading.Thread(target=pump)
        pumper.start()
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            timed_out = True
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
        rc = proc.wait()
        if isolated and rc == 3:
            rc = -1
            sandbox_reasons = ["the check could not be isolated (course/tools/grade-sandbox.sh); not graded"]
        elif isolated and rc > 128:
            rc = -(rc - 128)  # the sandbox's shell reports a signal N as 128+N
        pumper.join(timeout=10)
    # The check's children (if any) may hold the pipe: give the reader a moment, then go on.
    reader.join(timeout=10)
    seconds = time.monotonic() - started
    raw = channel[0] if channel else b""

    results, reasons, verdict = {}, list(sandbox_reasons), None
    names = {t["name"] for t in rubric["tests"]}
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            reasons.append("the result channel holds a line that is not the check's: forged results score 0")
            break
        if not isinstance(record, dict) or record.get("nonce") != nonce:
            reasons.append("a result without this run's nonce: the results were not written by the check's "
                           "harness (forged results score 0)")
            break
        if "finish" in record:
            verdict = record["finish"]
        elif record.get("test") not in names:
            reasons.append(f"the check reported a test the rubric does not have: {record.get('test')!r}")
            break
        elif record["test"] in results:
            reasons.append(f"the test {record['test']!r} was reported twice: forged results score 0")
            break
        else:
            share = record.get("thousandths", 1000 if record.get("passed") is True else 0)
            if not isinstance(share, int) or not 0 <= share <= 1000:
                reasons.append(f"the test {record['test']!r} reported a share of its points out of range: {share!r}")
                break
            results[record["test"]] = (record.get("passed") is True, record.get("output", ""), share)
    notes = []
    if timed_out:
        notes.append(f"the check did not finish within {timeout} s and was stopped")
    elif rc < 0:
        sig = -rc
        try:
            name = f" ({signal.Signals(sig).name[3:]})"
        except ValueError:
            name = ""
        notes.append(f"the check crashed: killed by signal {sig}{name} in your code; the tests before it "
                     f"keep their score")
    if not reasons:
        if rc == 0 and verdict != "PASS":
            reasons.append("the process exited 0 without the check's verdict (an exit from the submitted code?): "
                           "scored 0")
        elif verdict == "PASS" and rc != 0:
            reasons.append(f"the check passed but the process exited {rc}: scored 0")
        elif verdict == "PASS" and not {t["name"] for t in rubric["tests"] if not t.get("hidden")} <= set(results):
            reasons.append("the check passed without reporting every test of the rubric: scored 0")
        elif verdict == "FAIL" and rc == 0:
            reasons.append("the check failed but the process exited 0: scored 0")
    with open(os.path.join(out_dir, "output.txt"), "a") as output:
        for n in notes + reasons:
            output.write(f"  FAIL  {n}\n")
            if not quiet:
                print(f"  FAIL  {n}")
    report = write_report(exercise, rubric, out_dir, results, reasons, rc, seconds)
    if notes and not reasons:
        report["failures"] = notes + report["failures"]
        with open(os.path.join(out_dir, "report.json"), "w") as f:
            json.dump(report, f, indent=2)
    return report


def expect_failure(exercise):
    """The start's readable reason: its pools_add_exercise's EXPECT_FAILURE, or (01, whose check is
    built per pool) the rubric's "expect_failure"."""
    path = os.path.join(ROOT, "course", "exercises", exercise, "CMakeLists.txt")
    if not os.path.exists(path):
        return load_rubric(exercise).get("expect_failure")
    m = re.search(r'EXPECT_FAILURE\s+"([^"]*)"', open(path).read())
    return m.group(1) if m else None


def hidden_names(exercise):
    return {t["name"] for t in load_rubric(exercise)["tests"] if t.get("hidden")}


def student_files(exercise):
    if not os.path.exists(os.path.join(ROOT, "course", "exercises", exercise, "CMakeLists.txt")):
        return ["pool.hpp"]  # 01: the pool's header (course/tools/place-submission.sh)
    text = " ".join(open(os.path.join(ROOT, "course", "exercises", exercise, "CMakeLists.txt")).read().split())
    m = re.search(r"FILES\s+(.*?)\s+(?:[A-Z_]+\s|\))", text)
    return m.group(1).split() if m else []


def selftest(exercise, files_dir, exe, expect, timeout):
    start_dir = os.path.join(ROOT, "course", "exercises", exercise)
    files = [os.path.join(files_dir, f) if os.path.exists(os.path.join(files_dir, f)) else os.path.join(start_dir, f)
             for f in student_files(exercise)]
    static = subprocess.run([sys.executable, os.path.join(ROOT, "course", "tools", "grade_static.py"), exercise] + files,
                            capture_output=True, text=True)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(exe)), "selftest-" + os.path.basename(exe))
    if static.returncode == 2:
        print(static.stdout + static.stderr)
        return 1
    run_expect = None
    if os.path.exists(os.path.join(files_dir, "EXPECT")):
        for line in open(os.path.join(files_dir, "EXPECT")).read().splitlines()[1:]:
            if line.startswith("run: "):
                run_expect = line[5:]
    if static.returncode != 0:
        print(static.stdout, end="")
        rubric = load_rubric(exercise)
        if "tests" not in rubric:  # 01: graded by its report card; the static check is the test
            ok = re.search(expect, static.stdout) is not None
            print(("selftest: ok: " if ok else "selftest: FAILED: ") + f"the static check refused it, /{expect}/")
            return 0 if ok else 1
        report = write_report(exercise, rubric, out_dir, {},
                              ["the static check refused the submission: " + static.stdout.splitlines()[0]], -1, 0)
        text = static.stdout
        if run_expect is not None:
            # The same files run as if the static check had let them through: the result channel
            # alone must still refuse the forged verdict.
            ran = run_check(exercise, exe, out_dir + "-run", timeout, True, [])
            ran_text = open(os.path.join(out_dir + "-run", "output.txt"), errors="replace").read()
            ran_text += "\n".join(ran["failures"])
            print(f"run without the static check: {summary(ran)}")
            if ran["score"] != 0 or re.search(run_expect, ran_text) is None:
                print(f"selftest: FAILED: run without the static check, it scored {ran['score']} of "
                      f"{ran['max_score']}; the result channel must score it 0, saying /{run_expect}/")
                return 1
            print(f"selftest: ok: run without the static check, it scored 0, /{run_expect}/ shown")
    elif exe == "-":
        print("selftest: FAILED: the static check let it through, and there is no program to run")
        return 1
    else:
        report = run_check(exercise, exe, out_dir, timeout, True, [])
        text = open(os.path.join(out_dir, "output.txt"), errors="replace").read()
        print("\n".join(text.splitlines()[-30:]))
    text += "\n".join(report["failures"])
    print(summary(report))
    score, full = report["score"], report["max_score"]
    if expect == "solution":
        ok = score == full
        why = f"the reference solution scored {score} of {full}; it must score full marks"
    elif expect == "start":
        regex = expect_failure(exercise)
        # Every hidden test must be able to fail: the start fails each one that ran.
        passed_hidden = [t["name"] for t in report["tests"] if t["name"] in hidden_names(exercise) and t["score"] > 0]
        ok = score * 4 <= full and regex is not None and re.search(regex, text) is not None and not passed_hidden
        why = (f"the starting point scored {score} of {full} (at most 25 % allowed), must show /{regex}/ "
               f"and score 0 on every hidden test" + (f" (it scored on {passed_hidden})" if passed_hidden else ""))
    else:
        ok = score < full and re.search(expect, text) is not None
        why = f"the cheat scored {score} of {full}; it must lose points, with /{expect}/ shown"
    print(("selftest: ok: " if ok else "selftest: FAILED: ") + why)
    return 0 if ok else 1


def main(argv):
    if not argv or argv[0] not in ("run", "zero", "selftest"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    verb, rest = argv[0], argv[1:]
    timeout, quiet, extra = 120, False, []
    if "--" in rest:
        extra = rest[rest.index("--") + 1:]
        rest = rest[:rest.index("--")]
    if "--timeout" in rest:
        k = rest.index("--timeout")
        timeout = int(rest[k + 1])
        del rest[k:k + 2]
    if "--quiet" in rest:
        quiet = True
        rest.remove("--quiet")
    isolated = "--isolated" in rest
    if isolated:
        rest.remove("--isolated")
    if verb == "run" and len(rest) == 3:
        report = run_check(rest[0], rest[1], rest[2], timeout, quiet, extra, isolated)
        print(summary(report))
        return 0 if report["passed"] else 1
    if verb == "zero" and len(rest) in (3, 5):
        rubric = load_rubric(rest[0])
        report = write_report(rest[0], rubric, rest[1], {}, [rest[2]], -1, 0)
        print(summary(report))
        return 1
    if verb == "selftest" and len(rest) == 4:
        return selftest(rest[0], rest[1], rest[2], rest[3], timeout)
    print("grade_run.py: bad arguments (see the file's comment)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
