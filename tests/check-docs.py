#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keeps the user-facing pages manuals, not lab notebooks (ctest docs_pages).

  tests/check-docs.py               exit 1, naming page and line, when a page breaks a rule
  tests/check-docs.py --root DIR    check another checkout
  tests/check-docs.py --self-test   prove each rule fails on a page that breaks it

The rules (docs/results/README.md, "Page rules"):
  * README.md has at most 200 lines;
  * each variants/*/README.md has at most 350 lines and exactly the six `##` sections of
    VARIANT_SECTIONS, in that order (`###` inside them are free);
  * no commit hash (7-40 hex digits in backticks, or after "commit" or "at") outside the
    generated blocks of scripts/fill-numbers.py: a page's "measured at" line is generated;
  * nothing about the measuring machine's other load: a record's load_average is the only place.
docs/results/ is exempt (the results and their history name commits). Fenced code counts: a
command with a commit in it is as stale as prose.
"""
import argparse
import fnmatch
import glob
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The user-facing pages, as globs under the root.
PAGES = ["README.md", "variants/*/README.md", "server/README.md", "bench/README.md",
         "examples/*/README.md", "docs/*.md", "docs/course/*.md", "docs/traces/*.md"]
EXEMPT = ["docs/results/*"]
# Pages being rewritten on other branches (issue 41): reported, not enforced. The integrator
# empties this set once those branches are merged, and then every page is held to the rules.
PENDING = set()

README_MAX = 200
VARIANT_MAX = 350
VARIANT_SECTIONS = ["## What it is and when to use it", "## API reference", "## How it works", "## Numbers",
                    "## Pitfalls", "## Further reading"]
HEX = r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}"  # a digit and a letter: not 1000000, not "defaced"
HASH = re.compile(rf"`{HEX}`|\b(?:commits?|at)\s+`?({HEX})\b", re.IGNORECASE)
LOAD = re.compile(r"load average|shared with other|beside other (?:work|builds|jobs|runs)|other (?:builds|jobs) "
                  r"(?:were )?running|(?:busy|loaded|quiet) machine|machine(?:'s)? (?:was )?(?:busy|loaded|"
                  r"shared)|machine's (?:other )?load", re.IGNORECASE)


def fill_numbers():
    """scripts/fill-numbers.py, whose block finder says what is generated."""
    spec = importlib.util.spec_from_file_location("fill_numbers", os.path.join(ROOT, "scripts", "fill-numbers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pages(root):
    found = []
    for pattern in PAGES:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if not any(fnmatch.fnmatch(rel, e) for e in EXEMPT) and rel not in found:
                found.append(rel)
    return found


def outside_fences(lines):
    """(number, line) of the lines not inside fenced code."""
    fence = None
    for n, line in enumerate(lines, 1):
        s = line.lstrip()
        if fence is None and s.startswith(("```", "~~~")):
            fence = s[:3]
        elif fence is not None and s.startswith(fence):
            fence = None
        elif fence is None:
            yield n, line


def problems(page, text, fn):
    """Every broken rule of one page: (line, message)."""
    out = []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if page == "README.md" and len(lines) > README_MAX:
        out.append((len(lines), f"{len(lines)} lines, at most {README_MAX}"))
    if fnmatch.fnmatch(page, "variants/*/README.md"):
        if len(lines) > VARIANT_MAX:
            out.append((len(lines), f"{len(lines)} lines, at most {VARIANT_MAX}"))
        sections = [(n, l.rstrip()) for n, l in outside_fences(lines) if l.startswith("## ")]
        if [s for _, s in sections] != VARIANT_SECTIONS:
            where = sections[0][0] if sections else 1
            out.append((where, "its ## sections must be exactly, in order: " + "; ".join(VARIANT_SECTIONS)
                        + " (it has: " + "; ".join(s for _, s in sections) + ")"))
    # Generated text is blanked (not removed) so line numbers stay those of the page.
    try:
        blocks = fn.find_blocks(text)
    except fn.BlockError as e:
        return out + [(int(str(e).split(":", 1)[0]), str(e).split(":", 1)[1].strip())]
    chars = list(text)
    for b in blocks:
        for i in range(b["start"], b["end"]):
            if chars[i] != "\n":
                chars[i] = " "
    for n, line in enumerate("".join(chars).split("\n"), 1):
        for m in HASH.finditer(line):
            out.append((n, f"commit hash {m.group(1) or m.group(0).strip('`')} outside a g:measured block (the page's \"measured at\" "
                           "line is generated: scripts/fill-numbers.py; history goes to docs/results/history/)"))
        for m in LOAD.finditer(line):
            out.append((n, f"talk of the measuring machine's load ({m.group(0)!r}): a record's load_average is "
                           "the only place for it"))
    return sorted(out)


def check(root, pending):
    fn = fill_numbers()
    failed = 0
    still_pending = []
    for page in pages(root):
        text = open(os.path.join(root, page), encoding="utf-8").read()
        found = problems(page, text, fn)
        if page in pending:
            still_pending.append((page, len(found)))
            continue
        for line, msg in found:
            print(f"{page}:{line}: {msg}")
        failed += bool(found)
    for page, n in still_pending:
        print(f"pending (not enforced until its rewrite is merged): {page}: "
              + (f"{n} problem(s)" if n else "passes now: remove it from PENDING in tests/check-docs.py"))
    checked = len(pages(root)) - len(still_pending)
    if failed:
        print(f"check-docs: {failed} of {checked} page(s) break the page rules", file=sys.stderr)
        return 1
    print(f"check-docs: {checked} page(s) keep the page rules ({len(still_pending)} pending)")
    return 0


def self_test():
    me = os.path.abspath(__file__)
    sections = "".join(f"{s}\n\ntext\n\n" for s in VARIANT_SECTIONS)
    good = {
        "README.md": "# p\n\nMeasured: <!-- g:measured src=comparison.json -->\nat commit `abc1234`\n<!-- /g -->\n"
                     "A 7-digit number `1000000` and the word defaced are not hashes.\n",
        "variants/v/README.md": "# v\n\n" + sections + "```sh\n## a shell comment, not a section\n```\n",
        "docs/results/history/x.md": "at commit `abc1234`, load average 12\n",
    }
    bad = [
        ("README.md", "# p\n" + "line\n" * 200, "201 lines, at most 200"),
        ("README.md", "# p\n\nThe run at `abc1234` showed it.\n", "README.md:3: commit hash"),
        ("README.md", "# p\n\nservers built at commit 3e8ac85f, then\n", "README.md:3: commit hash"),
        ("docs/x.md", "# p\n\nMeasured while the machine was shared with other builds.\n", "docs/x.md:3: talk of"),
        ("docs/x.md", "# p\n\n(load average 6-11)\n", "docs/x.md:3: talk of"),
        ("variants/v/README.md", "# v\n\n" + sections.replace("## Pitfalls", "## Benchmark diary"), "## sections"),
        ("variants/v/README.md", "# v\n\n" + sections + "x\n" * 340, "at most 350"),
    ]
    failures = []
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)

        def run():
            p = subprocess.run([sys.executable, me, "--root", root, "--no-pending"], capture_output=True, text=True)
            return p.returncode, p.stdout + p.stderr

        for rel, text in good.items():
            write(rel, text)
        rc, out = run()
        if rc != 0:
            failures.append(f"pages that keep the rules must pass:\n{out}")
        for rel, text, says in bad:
            write(rel, text)
            rc, out = run()
            if rc != 1 or says not in out:
                failures.append(f"{rel} must fail saying '{says}':\n{out}")
            if rel in good:
                write(rel, good[rel])
            else:
                os.remove(os.path.join(root, rel))
    for f in failures:
        print("SELF-TEST FAILED:", f, file=sys.stderr)
    if failures:
        return 1
    print(f"check-docs self-test: {len(bad)} broken pages caught, generated blocks and docs/results/ exempt")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--no-pending", action="store_true", help="enforce the rules on the PENDING pages too")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    return check(os.path.abspath(args.root), set() if args.no_pending else PENDING)


if __name__ == "__main__":
    sys.exit(main())
