# SPDX-License-Identifier: MIT
"""The bench's Python tests report this way: one line per check, then a verdict and exit code.

    from checks import expect, verdict
    expect(x == 1, "x is 1")
    sys.exit(verdict())
"""
import sys

failures = []


def expect(cond, what):
    print(("ok      " if cond else "FAILED  ") + what)
    if not cond:
        failures.append(what)


def verdict():
    """Prints how many checks failed (or that all passed); 1 if any failed, else 0."""
    print(f"{len(failures)} failed" if failures else "all checks passed",
          file=sys.stderr if failures else sys.stdout)
    return 1 if failures else 0
