#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs BS::thread_pool's own test program (built against pools::futures through
pools/futures/bs_compat.hpp) and judges its output.

    run_bs_suite.py PROGRAM ALLOWED_FAILURES [ARGS...]

The program prints, for every check, a line ending in "-> passed." or "-> FAILED!", which starts
with what is checked or follows the line that says it ("Checking that ..."). A check passes the suite when it passed, or
when it failed and that description is listed in ALLOWED_FAILURES (one "description | reason" a
line: the features variants/futures/README.md lists as deliberate differences from BS). Exit 0
only when the program exited normally, ran at least one check, and every failure is an allowed
one; anything else exits 1 with the unexpected failures and their descriptions.
"""
import os
import re
import subprocess
import sys

RESULT = re.compile(r"-> (passed\.|FAILED!)\s*$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
EXPECTED = re.compile(r"- Expected: .*$")


def read_allowed(path):
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            description, sep, reason = line.partition("|")
            if not sep or not description.strip() or not reason.strip():
                sys.exit(f"{path}:{number}: expected 'description | reason', got: {line}")
            allowed[description.strip()] = reason.strip()
    return allowed


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: run_bs_suite.py PROGRAM ALLOWED_FAILURES [ARGS...]")
    program, allowed_path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    allowed = read_allowed(allowed_path)
    env = dict(os.environ, NO_COLOR="1")
    # A cross build's program runs under its emulator (POOLS_TEST_EMULATOR, cmake/pools.cmake).
    emulator = os.environ.get("POOLS_TEST_EMULATOR", "").split()
    run = subprocess.run([*emulator, program, *args], capture_output=True, text=True, env=env, errors="replace")
    output = ANSI.sub("", run.stdout)

    passed, allowed_failed, unexpected = 0, [], []
    description = "(before any description)"
    for line in output.splitlines():
        m = RESULT.search(line)
        if not m:
            if line.strip():
                description = line.strip()
            continue
        # Some checks say what they check on the result's own line ("Setting affinity to CPU 1
        # only -> passed."); others on the line before. "- Expected: a, obtained: b" is the
        # result, not the description.
        own = EXPECTED.sub("", line[: m.start()]).strip()
        check_description = own or description
        if m.group(1) == "passed.":
            passed += 1
        elif check_description in allowed:
            allowed_failed.append(check_description)
        else:
            unexpected.append((check_description, line.strip()))

    total = passed + len(allowed_failed) + len(unexpected)
    print(f"BS::thread_pool suite on pools::futures: {passed} of {total} checks passed, "
          f"{len(allowed_failed)} failed as listed deliberate differences, {len(unexpected)} failed unexpectedly "
          f"(program exit status {run.returncode})")
    for d in sorted(set(allowed_failed)):
        print(f"  allowed: {d}\n           reason: {allowed[d]}")
    for d, line in unexpected:
        print(f"  UNEXPECTED FAILURE: {d}\n                      {line}")
    # BS's program returns the number of failed checks; a crash is a negative status (a signal).
    crashed = run.returncode < 0 or run.returncode != len(allowed_failed) + len(unexpected)
    if crashed or total == 0 or unexpected:
        if crashed or total == 0:
            print("the program did not finish its checks normally; its output follows\n" + output[-4000:])
            if run.stderr:
                print("stderr:\n" + run.stderr[-4000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
