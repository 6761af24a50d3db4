#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source file says its licence: an SPDX line naming the licence in LICENSE.

  tests/check-licence.py             exit 0 when every tracked source file carries the line
  tests/check-licence.py --self-test prove the check fails on a file without it

A source file is a tracked C++ file (.cpp, .hpp, .h), a script (.py, .sh, .ci/run), a CMake
file (CMakeLists.txt, .cmake) or a template of one of those (scripts/templates, *.in): whatever a
reader may copy out of the repository. The line must be among a file's first three lines (after a
shebang), the place REUSE and most scanners look. Prose, data and pictures are left out.
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LICENCE = "MIT"
LINE = re.compile(r"SPDX-License-Identifier:\s*(\S+)")
SOURCE = re.compile(r"(\.(cpp|hpp|h|py|sh|cmake)|CMakeLists\.txt|^\.ci/run|(?<!\.md)\.in)$")


def sources(root):
    try:
        out = subprocess.check_output(["git", "-C", root, "ls-files"], text=True, stderr=subprocess.DEVNULL)
        files = out.split()
    except (OSError, subprocess.CalledProcessError):  # a hand-out without history: walk the tree
        files = [os.path.relpath(os.path.join(b, n), root) for b, _, ns in os.walk(root) for n in ns
                 if "/build" not in "/" + os.path.relpath(b, root)]
    return sorted(f for f in files if SOURCE.search(f) and not f.endswith("README.md.in"))


def problems(root):
    found = []
    for rel in sources(root):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(3)]
        ids = [m.group(1) for line in head for m in [LINE.search(line)] if m]
        if not ids:
            found.append(f"{rel}: no 'SPDX-License-Identifier: {LICENCE}' line in its first three lines")
        elif ids[0] != LICENCE:
            found.append(f"{rel}: SPDX-License-Identifier is {ids[0]}, LICENSE is {LICENCE}")
    return found


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "good.cpp"), "w") as f:
            f.write(f"// SPDX-License-Identifier: {LICENCE}\nint x;\n")
        with open(os.path.join(d, "run.sh"), "w") as f:
            f.write(f"#!/bin/sh\n# SPDX-License-Identifier: {LICENCE}\ntrue\n")
        if problems(d):
            print("self-test: a well-marked tree was rejected:", problems(d))
            return 1
        with open(os.path.join(d, "bad.hpp"), "w") as f:
            f.write("// no licence here\n")
        with open(os.path.join(d, "other.py"), "w") as f:
            f.write("# SPDX-License-Identifier: GPL-3.0-only\n")
        bad = problems(d)
        if len(bad) != 2:
            print("self-test: expected 2 problems (missing, wrong licence), got:", bad)
            return 1
    print("self-test: a missing and a wrong SPDX line both fail the check")
    return 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    found = problems(ROOT)
    for p in found:
        print(p)
    if found:
        print(f"check-licence: {len(found)} source files without the SPDX line (LICENSE: {LICENCE})")
        return 1
    print(f"check-licence: {len(sources(ROOT))} source files, each with 'SPDX-License-Identifier: {LICENCE}'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
