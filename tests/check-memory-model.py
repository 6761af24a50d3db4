#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keeps docs/memory-model.md true: every memory order in the library code is cited there by line.

  tests/check-memory-model.py            exit 0 when every site is cited and every citation is a site
  tests/check-memory-model.py --list     every site, by file (for whoever updates the page)
  tests/check-memory-model.py --doc P    check another copy of the page
  tests/check-memory-model.py --self-test  prove the check fails on a stale and on a missing citation

A site is a line of library code (common/include, common/src, variants/*/include, variants/*/src,
server/include, server/src, server/drivers) that names a std::memory_order or calls
std::atomic_thread_fence or pools::detail::seq_cst_fence outside a comment. A citation is a backquoted `path:N` or `path:N,M,...`
in the page. The check fails on a site the page does not cite ("uncited") and on a citation whose
line is no longer a site ("stale"): when code moves, the page's line numbers must move with it.
Tests, benches, the Relacy models and the conformance suite are not library code: left out.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCOPE = ["common/include", "common/src", "server/include", "server/src", "server/drivers"]
SITE = re.compile(r"memory_order|atomic_thread_fence|\bseq_cst_fence\(")
CITATION = re.compile(r"`([\w./+-]+\.(?:hpp|cpp|h)):(\d+(?:,\d+)*)`")


def scope_dirs():
    dirs = list(SCOPE)
    for v in sorted(os.listdir(os.path.join(ROOT, "variants"))):
        dirs += [f"variants/{v}/include", f"variants/{v}/src"]
    return [d for d in dirs if os.path.isdir(os.path.join(ROOT, d))]


def code_part(line):
    """The line without its // comment (string literals here never hold '//')."""
    return line.split("//", 1)[0]


def sites():
    found = {}
    for d in scope_dirs():
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.join(base, name)
                rel = os.path.relpath(path, ROOT)
                in_block = False
                for n, line in enumerate(open(path, encoding="utf-8"), 1):
                    text = line
                    if in_block:
                        if "*/" not in text:
                            continue
                        text, in_block = text.split("*/", 1)[1], False
                    if "/*" in code_part(text) and "*/" not in text.split("/*", 1)[1]:
                        text, in_block = text.split("/*", 1)[0], True
                    if SITE.search(code_part(text)):
                        found[(rel, n)] = line.strip()
    return found


def citations(doc):
    cited = {}
    for n, line in enumerate(open(doc, encoding="utf-8"), 1):
        for path, lines in CITATION.findall(line):
            for ln in lines.split(","):
                cited.setdefault((path, int(ln)), n)
    return cited


def self_test(doc):
    """A check that cannot fail proves nothing: break a copy of the page two ways, expect two failures."""
    import subprocess
    import tempfile
    text = open(doc, encoding="utf-8").read()
    first = CITATION.search(text)
    if first is None:
        print("self-test: the page cites nothing", file=sys.stderr)
        return 1
    path, lines = first.group(1), first.group(2)
    shifted = text.replace(f"`{path}:{lines}`", f"`{path}:{lines.split(',')[0]}9999`", 1)
    dropped = text.replace(first.group(0), "(citation removed)", 1)
    failures = 0
    for name, broken, expect in (("shifted", shifted, "stale:"), ("dropped", dropped, "uncited:")):
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(broken)
        p = subprocess.run([sys.executable, __file__, "--doc", f.name], capture_output=True, text=True)
        os.unlink(f.name)
        ok = p.returncode == 1 and expect in p.stdout
        print(f"self-test: a {name} citation of {path}: {'fails, as it must' if ok else 'NOT detected'}")
        failures += not ok
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "memory-model.md"))
    ap.add_argument("--list", action="store_true", help="print every site by file and exit")
    ap.add_argument("--self-test", action="store_true",
                    help="check that a shifted and a dropped citation in a copy of the page fail")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.doc)
    found = sites()
    if args.list:
        last = None
        for (path, n), text in sorted(found.items()):
            if path != last:
                print(f"\n{path}")
                last = path
            print(f"  {n:5}: {text}")
        print(f"\n{len(found)} sites in {len({p for p, _ in found})} files")
        return 0
    if not os.path.exists(args.doc):
        print(f"check-memory-model: no {args.doc}", file=sys.stderr)
        return 2
    cited = citations(args.doc)
    doc = os.path.relpath(args.doc, ROOT)
    uncited = sorted(k for k in found if k not in cited)
    stale = []
    for (path, n), doc_line in sorted(cited.items()):
        if (path, n) in found:
            continue
        full = os.path.join(ROOT, path)
        if not os.path.exists(full):
            stale.append(f"stale: {path}:{n} cited in {doc} line {doc_line}, but there is no such file")
            continue
        lines = open(full, encoding="utf-8").read().splitlines()
        now = lines[n - 1].strip() if n <= len(lines) else "(past the end of the file)"
        stale.append(f"stale: {path}:{n} cited in {doc} line {doc_line}, but the line is now: {now}")
    for path, n in uncited:
        print(f"uncited: {path}:{n}: {found[(path, n)]}")
    for s in stale:
        print(s)
    if uncited or stale:
        print(f"check-memory-model: {len(uncited)} uncited, {len(stale)} stale; fix {doc} "
              "(tests/check-memory-model.py --list shows every site)", file=sys.stderr)
        return 1
    print(f"check-memory-model: {len(found)} sites in {len({p for p, _ in found})} files, all cited in {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
