#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fills every generated number block of the Markdown pages from the result files in docs/results/.

  scripts/fill-numbers.py                      rewrite every block from its data
  scripts/fill-numbers.py --check              exit 1, printing a unified diff per page, when a page
                                               differs from what its data gives (ctest docs_numbers)
  scripts/fill-numbers.py --root DIR [FILE...] another checkout; only these pages (paths under DIR)
  scripts/fill-numbers.py --self-test          prove --check catches a drifted block and that a bad
                                               block is an error naming its page and line

A block is an HTML comment pair (invisible on GitHub); the text between them belongs to this script:

  fib takes <!-- g:value src=records/fib.json key=coroutines.median_ms fmt=.0f -->43<!-- /g --> ms

When the opener ends its line the block is multi-line (a table, a paragraph), otherwise inline.
The views, their arguments and the record format are documented in docs/results/README.md; the
ratios and the reference of each workload are bench/compare.py's own (MEASURE, value_of), and the
HTTP ratios bench/http/run.py's, so a page shows the statistic the run itself reports.
Blocks inside fenced code or inline code are examples, not blocks. Exit 2 with PAGE:LINE: reason
on a bad block (unknown view or argument, missing file, key, subject or workload).
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# bench/compare.py holds the comparison's rules (what each workload is judged by and its
# reference): imported, not copied, so the pages cannot use other statistics than the run's.
sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare  # noqa: E402
import importlib.util  # noqa: E402

# bench/http/run.py decides which servers cannot serve /sleep by design (their pool blocks in the
# sleep): imported too, so a page's table says what the run's own table says.
_spec = importlib.util.spec_from_file_location("http_run", os.path.join(ROOT, "bench", "http", "run.py"))
http_bench = importlib.util.module_from_spec(_spec)
sys.modules["http_run"] = http_bench  # its dataclasses look their module up there
_spec.loader.exec_module(http_bench)

OPENER = re.compile(r"<!-- g:([A-Za-z][\w-]*)((?:\s+[^\s=]+=\S*)*)\s*-->")
CLOSER = "<!-- /g -->"
# Directories never scanned for pages: build trees, run outputs, version control.
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
SKIP_PREFIXES = ("build", ".")


class BlockError(Exception):
    """A bad block: the message names what is wrong; the caller adds PAGE:LINE."""


# ---------------------------------------------------------------- finding blocks


def code_spans(text):
    """(start, end) of every fenced code block and inline code span: examples, not blocks."""
    spans = []
    fence = None
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = (pos, stripped[:3])
        elif fence is not None and stripped.startswith(fence[1]):
            spans.append((fence[0], pos + len(line)))
            fence = None
        elif fence is None:
            for m in re.finditer(r"(`+)(?:.+?)\1", line):
                spans.append((pos + m.start(), pos + m.end()))
        pos += len(line)
    if fence is not None:
        spans.append((fence[0], len(text)))
    return spans


def find_blocks(text):
    """Every block of a page: dicts with view, args (raw string), line, start/end of its content."""
    spans = code_spans(text)

    def in_code(i):
        return any(a <= i < b for a, b in spans)

    blocks = []
    pos = 0
    while True:
        m = OPENER.search(text, pos)
        if not m:
            break
        if in_code(m.start()):
            pos = m.end()
            continue
        line = text.count("\n", 0, m.start()) + 1
        end = text.find(CLOSER, m.end())
        nxt = OPENER.search(text, m.end())
        while nxt and in_code(nxt.start()):
            nxt = OPENER.search(text, nxt.end())
        if end < 0 or (nxt and nxt.start() < end):
            raise BlockError(f"{line}: g:{m.group(1)} has no closing {CLOSER} before the next block")
        blocks.append({"view": m.group(1), "args": m.group(2), "line": line,
                       "start": m.end(), "end": end, "multiline": text.startswith("\n", m.end())})
        pos = end + len(CLOSER)
    return blocks


def strip_blocks(text):
    """The page with every block's generated text removed (check-docs.py checks the rest)."""
    out, pos = [], 0
    for b in find_blocks(text):
        out.append(text[pos:b["start"]])
        pos = b["end"]
    out.append(text[pos:])
    return "".join(out)


def parse_args(raw):
    args = {}
    for word in raw.split():
        key, _, value = word.partition("=")
        if key in args:
            raise BlockError(f"argument '{key}' given twice")
        args[key] = value
    return args


# ---------------------------------------------------------------- data


class Data:
    """The result files of one checkout, each read once."""

    def __init__(self, results_dir):
        self.dir = results_dir
        self.cache = {}

    def load(self, src):
        if not src:
            raise BlockError("missing src=FILE (a file under docs/results/)")
        if src not in self.cache:
            path = os.path.normpath(os.path.join(self.dir, src))
            if not path.startswith(os.path.normpath(self.dir) + os.sep):
                raise BlockError(f"src={src} is outside docs/results/")
            try:
                with open(path, encoding="utf-8") as f:
                    self.cache[src] = json.load(f)
            except OSError:
                raise BlockError(f"src={src}: no such file docs/results/{src}") from None
            except ValueError as e:
                raise BlockError(f"src={src}: not valid JSON ({e})") from None
        return self.cache[src]


def decode(value):
    """Argument values have no spaces: %20 is a space, %2C a comma inside one list item."""
    return urllib.parse.unquote(value)


def fmt_number(value, spec, what):
    if value is None:
        return "–"
    if spec is None:
        return str(value)
    try:
        return format(value, decode(spec))
    except (ValueError, TypeError) as e:
        raise BlockError(f"fmt={spec} cannot format {what} = {value!r}: {e}") from None


def dotted(obj, path, where):
    cur = obj
    for i, part in enumerate(path.split(".")):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            have = ", ".join(sorted(cur)) if isinstance(cur, dict) else type(cur).__name__
            raise BlockError(f"key={path}: no '{part}' in {where}"
                             + (f".{'.'.join(path.split('.')[:i])}" if i else "") + f" (it has: {have})")
    return cur


def markdown_table(columns, rows, fmts=None):
    def cell(v, j):
        spec = fmts[j] if fmts and j < len(fmts) and fmts[j] else None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return fmt_number(v, spec, columns[j])
        return "–" if v is None else str(v)

    # A column with any number in it is right-aligned (a row may say in words why it has none).
    numeric = [any(isinstance(r[j], (int, float)) and not isinstance(r[j], bool) for r in rows if j < len(r))
               for j in range(len(columns))]
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for r in rows:
        if len(r) != len(columns):
            raise BlockError(f"a row has {len(r)} cells, the table {len(columns)} columns: {r}")
        lines.append("| " + " | ".join(cell(v, j) for j, v in enumerate(r)) + " |")
    return "\n".join(lines)


def require(args, allowed, required, view):
    for k in args:
        if k not in allowed:
            raise BlockError(f"g:{view}: unknown argument '{k}' (allowed: {', '.join(allowed)})")
    for k in required:
        if not args.get(k):
            raise BlockError(f"g:{view}: missing {k}=")


# ---------------------------------------------------------------- views: records


def view_value(args, data):
    require(args, ("src", "key", "fmt", "unit"), ("src", "key"), "value")
    rec = data.load(args["src"])
    if not isinstance(rec, dict) or not isinstance(rec.get("values"), dict):
        raise BlockError(f"src={args['src']} is not a record (no \"values\"): g:value reads records")
    key = args["key"]
    if key.startswith("values.") and "values" not in rec["values"]:
        key = key[len("values."):]  # the path written from the record's top: the same value
    v = dotted(rec["values"], key, f"{args['src']} values")
    if isinstance(v, (dict, list)):
        raise BlockError(f"key={args['key']} in {args['src']} is not a number but a {type(v).__name__}")
    return fmt_number(v, args.get("fmt"), args["key"]) + decode(args.get("unit", ""))


def view_table(args, data):
    require(args, ("src", "table"), ("src", "table"), "table")
    rec = data.load(args["src"])
    tables = rec.get("tables") if isinstance(rec, dict) else None
    if not isinstance(tables, dict) or args["table"] not in tables:
        have = ", ".join(sorted(tables)) if isinstance(tables, dict) else "none"
        raise BlockError(f"table={args['table']}: no such table in {args['src']} (tables: {have})")
    t = tables[args["table"]]
    if not isinstance(t.get("columns"), list) or not isinstance(t.get("rows"), list):
        raise BlockError(f"{args['src']} tables.{args['table']} needs \"columns\" and \"rows\" lists")
    return markdown_table(t["columns"], t["rows"], t.get("fmt"))


def measured_line(command, commit, date, machine, load=None, extra=""):
    load = f" (load average {load})" if load else ""
    return f"Measured by `{command}`{extra} at commit `{commit}`, {date}, on {machine}{load}."


def view_measured(args, data):
    require(args, ("src",), ("src",), "measured")
    src = args["src"]
    d = data.load(src)
    if isinstance(d, dict) and "values" in d:  # a record
        for k in ("command", "commit", "date", "machine"):
            if not d.get(k):
                raise BlockError(f"{src} has no \"{k}\": a record says how, where and when it was measured")
        return measured_line(d["command"], d["commit"], d["date"], d["machine"], d.get("load_average"))
    if isinstance(d, dict) and "records" in d:  # compare.py's results.json (published as comparison.json)
        meta = d.get("meta", {})
        if not meta.get("commit"):
            raise BlockError(f"{src} has no meta.commit")
        # A run of compare.sh names no command; a scoped compare.py run published as a record of its
        # own (e.g. docs/results/stdexec-comparison.json) carries its command line in meta.command.
        cmd = meta.get("command") or "./scripts/compare.sh" + ("" if d.get("quick") else " --full")
        extra = "" if meta.get("command") else \
            f" (`--threads {d.get('threads')} --reps {d.get('reps')} --rounds {d.get('rounds')}`)"
        return measured_line(cmd, meta["commit"], meta.get("date", "?").split(" ")[0],
                             compare_machine(d), None, extra)
    if isinstance(d, dict) and "results" in d:  # bench/http/run.py's http.json
        meta = d.get("meta", {})
        if not meta.get("commit"):
            raise BlockError(f"{src} has no meta.commit (scripts/publish-results.py writes it)")
        machine = meta.get("machine") or meta.get("cpu") or "?"
        return measured_line(meta.get("command", "bench/http/run.py"), meta["commit"],
                             meta.get("time", "?")[:10], machine)
    raise BlockError(f"{src}: neither a record, nor a compare.py nor a bench/http/run.py result file")


def compare_machine(run):
    """What a compare.py run says about its machine: meta.machine when it recorded one, else the
    CPU, thread count and compiler of its records."""
    meta = run.get("meta", {})
    compilers = sorted({r["compiler"] for r in run.get("records", []) if r.get("compiler")})
    where = [meta["machine"]] if meta.get("machine") else [meta.get("cpu", "?"), f"{run.get('threads')} threads"]
    return ", ".join(where + [c[:3].upper() + c[3:] for c in compilers[:1]])


# ---------------------------------------------------------------- views: compare.sh


CMP_STATS = {
    # stat: (function of (record, workload, run records), default format)
    "ratio": (None, ".2f"),
    "median_ms": (lambda r, w: r.get("median_ns") / 1e6 if r.get("median_ns") is not None else None, ".1f"),
    "ns_per_task": (lambda r, w: r.get("metrics", {}).get("ns_per_task"), ",.0f"),
    "p50_us": (lambda r, w: _div(r.get("metrics", {}).get("p50_ns"), 1e3), ".1f"),
    "p99_us": (lambda r, w: _div(r.get("metrics", {}).get("p99_ns"), 1e3), ".1f"),
    "bytes_per_task": (lambda r, w: r.get("metrics", {}).get("bytes_per_task"), ",.0f"),
    "max_rss_mib": (lambda r, w: _div(r.get("max_rss_kib"), 1024), ".1f"),
}


def _div(v, d):
    return None if v is None else v / d


def cmp_cell(run, subject, workload, stat, spec, src):
    """One cell of a compare.py run: a number, or why there is none (as compare.py's summary says)."""
    if workload not in compare.MEASURE:
        raise BlockError(f"unknown workload '{workload}' (compare.py's: {', '.join(compare.WORKLOADS)})")
    if stat not in CMP_STATS:
        raise BlockError(f"unknown stat '{stat}' (known: {', '.join(CMP_STATS)})")
    by = {(r["variant"], r["workload"]): r for r in run["records"]}
    subjects = {r["variant"] for r in run["records"]}
    if subject not in subjects:
        raise BlockError(f"unknown subject '{subject}' in {src} (it has: {', '.join(sorted(subjects))})")
    r = by.get((subject, workload))
    if r is None:
        return "—"
    v = compare.value_of(r, workload)
    if v is None:
        return "FAIL" if r.get("failed") else "skip" if r.get("skipped") else "n/s"
    if stat == "ratio":
        ref = by.get((compare.MEASURE[workload][3], workload))
        rv = compare.value_of(ref, workload) if ref else None
        x = v / rv if rv else None  # the reference did not run: no ratio
    else:
        x = CMP_STATS[stat][0](r, workload)
    return "—" if x is None else fmt_number(x, spec or CMP_STATS[stat][1], f"{subject} {workload} {stat}")


def comparison(args, data):
    run = data.load(args.get("src") or "comparison.json")
    if not isinstance(run, dict) or not isinstance(run.get("records"), list):
        raise BlockError(f"src={args.get('src') or 'comparison.json'} is not a compare.py result file")
    return run


def view_cmp_table(args, data):
    require(args, ("src", "subjects", "workloads", "stat", "fmt", "labels", "headers"), ("subjects", "workloads"),
            "cmp-table")
    run = comparison(args, data)
    subjects = args["subjects"].split(",")
    workloads = args["workloads"].split(",")
    labels = [decode(x) for x in args["labels"].split(",")] if args.get("labels") else [s.rstrip("?") for s in subjects]
    if len(labels) != len(subjects):
        raise BlockError(f"labels= has {len(labels)} names for {len(subjects)} subjects")
    # "tbb/again?": a row only when the run has that subject (a noise floor an older run lacks).
    present = {r["variant"] for r in run["records"]}
    kept = [(s.rstrip("?"), label) for s, label in zip(subjects, labels) if not s.endswith("?") or s[:-1] in present]
    subjects, labels = [s for s, _ in kept], [label for _, label in kept]
    rows = [[label] + [cmp_cell(run, s, w, args.get("stat", "ratio"), args.get("fmt"), args.get("src") or "comparison.json")
                       for w in workloads] for s, label in zip(subjects, labels)]
    header = [decode(x) for x in args["headers"].split(",")] if args.get("headers") else ["subject"] + workloads
    if len(header) != len(workloads) + 1:
        raise BlockError(f"headers= has {len(header)} names for the subject column and {len(workloads)} workloads")
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(workloads)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def view_cmp_value(args, data):
    require(args, ("src", "subject", "workload", "stat", "fmt"), ("subject", "workload", "stat"), "cmp-value")
    run = comparison(args, data)
    return cmp_cell(run, args["subject"], args["workload"], args["stat"], args.get("fmt"),
                    args.get("src") or "comparison.json")


# ---------------------------------------------------------------- views: bench/http/run.py

PATHS = {"/plaintext": "plaintext", "/sleep": "sleep"}
HTTP_STATS = {"rps": ("requests_per_s", ",.0f", "req/s"), "p50_ms": ("p50_ms", ".1f", "p50 ms"),
              "p99_ms": ("p99_ms", ".2f", "p99 ms"), "ratio": ("ratio", ".2f", None),
              "p99_ratio": ("p99_ratio", ".2f", "p99 × nginx")}


def http_scenario(args):
    if args.get("scenario"):
        return args["scenario"]
    if args.get("path") in PATHS:
        return PATHS[args["path"]]
    raise BlockError("give scenario=plaintext|pipeline|sleep|sleep_10k (or path=/plaintext|/sleep)")


def http_stat(results, server, scenario, stat, src):
    if stat not in HTTP_STATS:
        raise BlockError(f"unknown stat '{stat}' (known: {', '.join(HTTP_STATS)})")
    rows = [r for r in results if r["scenario"] == scenario]
    if not rows:
        have = sorted({r["scenario"] for r in results})
        raise BlockError(f"unknown scenario '{scenario}' in {src} (it has: {', '.join(have)})")
    r = next((x for x in rows if x["server"] == server), None)
    if r is None:
        raise BlockError(f"unknown server '{server}' for {scenario} in {src} "
                         f"(it has: {', '.join(x['server'] for x in rows)})")
    if stat == "p99_ratio" and r.get("p99_ratio") is None:
        # bench/http/run.py's p99_ratio (p99 / nginx's p99, same scenario), for a file written
        # before it recorded the field.
        ref = next((x for x in rows if x["server"] == "nginx"), None)
        return r["p99_ms"] / ref["p99_ms"] if ref and ref.get("p99_ms") and r.get("p99_ms") is not None else None
    return r.get(HTTP_STATS[stat][0])


def http_run(args, data):
    src = args.get("src") or "http.json"
    run = data.load(src)
    if not isinstance(run, dict) or not isinstance(run.get("results"), list):
        raise BlockError(f"src={src} is not a bench/http/run.py result file")
    return src, run["results"]


def view_http_value(args, data):
    require(args, ("src", "subject", "scenario", "path", "stat", "fmt"), ("subject", "stat"), "http-value")
    src, results = http_run(args, data)
    v = http_stat(results, args["subject"], http_scenario(args), args["stat"], src)
    if args["stat"] == "rps" and not v:
        v = None
    return fmt_number(v, args.get("fmt") or HTTP_STATS.get(args["stat"], (0, None))[1], args["stat"])


def view_http_table(args, data):
    require(args, ("src", "scenario", "path", "subjects", "stats"), (), "http-table")
    src, results = http_run(args, data)
    scenario = http_scenario(args)
    sleep = scenario.startswith("sleep")
    servers = args["subjects"].split(",") if args.get("subjects") else \
        list(dict.fromkeys(r["server"] for r in results if r["scenario"] == scenario))
    stats = args["stats"].split(",") if args.get("stats") else \
        (["rps", "ratio", "p50_ms", "p99_ms", "p99_ratio"] if sleep else ["rps", "ratio", "p99_ms"])
    header = ["server"] + [HTTP_STATS[s][2] or ("× Little's law limit" if sleep else "× nginx")
                           if s in HTTP_STATS else s for s in stats]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * len(stats)]
    for server in servers:
        values = [http_stat(results, server, scenario, s, src) for s in stats]
        if sleep and server != "nginx" and http_bench.blocks_in_sleep(server):
            # bench/http/run.py's table says the same: a pool that blocks a worker for each sleep
            # serves a few dozen of them a second, whatever the run measured.
            lines.append(f"| {server} | cannot serve it by design" + " |" * len(stats))
            continue
        cells = [fmt_number(v if not (s == "rps" and not v) else None, HTTP_STATS[s][1], s)
                 for s, v in zip(stats, values)]
        lines.append(f"| {server} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def view_records(args, data):
    """An index of records/: each record's file, title and date (docs/results/README.md)."""
    require(args, (), (), "records")
    folder = os.path.join(data.dir, "records")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json")) if os.path.isdir(folder) else []
    rows = []
    for n in names:
        rec = data.load(f"records/{n}")
        if not isinstance(rec, dict) or not rec.get("title") or not rec.get("date"):
            raise BlockError(f"records/{n} has no \"title\" or \"date\"")
        rows.append([f"[`{n}`](records/{n})", rec["title"], rec["date"]])
    return markdown_table(["record", "what it measured", "date"], rows) if rows else "(no records yet)"


VIEWS = {"records": view_records, "value": view_value, "table": view_table, "measured": view_measured,
         "cmp-table": view_cmp_table, "cmp-value": view_cmp_value,
         "http-table": view_http_table, "http-value": view_http_value}


# ---------------------------------------------------------------- pages


def fill_text(text, data, page):
    """The page with every block filled. Raises SystemExit(2) naming PAGE:LINE on a bad block."""
    try:
        blocks = find_blocks(text)
    except BlockError as e:
        fail(f"{page}:{e}")
    out, pos = [], 0
    for b in blocks:
        try:
            if b["view"] not in VIEWS:
                raise BlockError(f"unknown view 'g:{b['view']}' (known: {', '.join('g:' + v for v in VIEWS)})")
            body = VIEWS[b["view"]](parse_args(b["args"]), data)
            if not b["multiline"] and "\n" in body:
                raise BlockError(f"g:{b['view']} makes several lines: put a line break after its opener")
        except BlockError as e:
            fail(f"{page}:{b['line']}: {e}")
        out.append(text[pos:b["start"]])
        out.append("\n" + body + "\n" if b["multiline"] else body)
        pos = b["end"]
    out.append(text[pos:])
    return "".join(out), len(blocks)


def fail(msg):
    print(f"fill-numbers: {msg}", file=sys.stderr)
    sys.exit(2)


def pages_of(root, files):
    if files:
        return [os.path.relpath(os.path.abspath(os.path.join(root, f)) if not os.path.isabs(f) else f, root)
                for f in files]
    found = []
    for base, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(SKIP_PREFIXES))
        if os.path.relpath(base, root).replace(os.sep, "/").startswith("bench/results"):
            continue  # run outputs, not pages
        found += [os.path.relpath(os.path.join(base, n), root) for n in sorted(names) if n.endswith(".md")]
    return found


def run(root, files, check):
    data = Data(os.path.join(root, "docs", "results"))
    drift = 0
    total = 0
    for page in pages_of(root, files):
        path = os.path.join(root, page)
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            fail(f"{page}: {e.strerror}")
        if "<!-- g:" not in text:
            continue
        new, n = fill_text(text, data, page)
        total += n
        if new == text:
            continue
        drift += 1
        if check:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                                       f"a/{page}", f"b/{page}"))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"filled {page}")
    if check and drift:
        print(f"fill-numbers: {drift} page(s) differ from their data: run scripts/fill-numbers.py "
              "(and commit the pages), or fix the data", file=sys.stderr)
        return 1
    print(f"fill-numbers: {total} block(s), " + ("every page matches its data" if check or not drift
                                                  else f"{drift} page(s) rewritten"))
    return 0


# ---------------------------------------------------------------- self-test


def self_test():
    """Tiny pages and records in a temporary tree, run through this script's command line."""
    me = os.path.abspath(__file__)
    failures = []

    def call(root, *extra):
        p = subprocess.run([sys.executable, me, "--root", root, *extra], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    def expect(cond, what, out=""):
        if not cond:
            failures.append(f"{what}\n{out}")

    record = {"title": "t", "command": "bench/x --n 3", "commit": "abc1234", "date": "2026-01-02",
              "machine": "2 vCPU test VM", "values": {"coroutines": {"median_ms": 42.6}},
              "tables": {"t": {"columns": ["rung", "ms"], "rows": [["textbook", 24.1], ["tuned", 3]]}}}
    rec = lambda v, w, ns, **m: {"variant": v, "workload": w, "supported": True, "median_ns": ns,
                                 "metrics": m, "min_ns": ns, "max_ns": ns, "max_rss_kib": 1}
    comparison = {"meta": {"date": "2026-01-03 10:00", "cpu": "Test CPU", "commit": "def5678"}, "threads": 2,
                  "reps": 3, "rounds": 3, "quick": False,
                  "records": [rec("tbb", "fib", 100e6), rec("coroutines", "fib", 50e6),
                              {"variant": "futures", "workload": "fib", "supported": False, "reason": "no"},
                              rec("asio_pool", "submit", 1, ns_per_task=400.0),
                              rec("coroutines", "submit", 1, ns_per_task=100.0)]}
    hr = lambda server, scenario, rps, p99, ratio: {"server": server, "scenario": scenario, "requests_per_s": rps,
                                                    "p50_ms": 1.0, "p99_ms": p99, "ratio": ratio}
    http = {"meta": {"command": "bench/http/run.py --repeat 3", "time": "2026-01-04T01:00:00+0000",
                     "commit": "fed9876", "machine": "test VM"},
            "results": [hr("nginx", "plaintext", 1000.0, 2.0, 1.0), hr("coroutines", "plaintext", 1100.0, 1.0, 1.1),
                        hr("nginx", "sleep", 500.0, 20.0, 0.5), hr("futures", "sleep", 0.0, None, 0.0)]}
    page = ("# t\n\nfib <!-- g:value src=records/t.json key=coroutines.median_ms fmt=.0f unit=%20ms -->?<!-- /g -->.\n\n"
            "<!-- g:table src=records/t.json table=t -->\n<!-- /g -->\n\n"
            "<!-- g:cmp-table subjects=coroutines,futures,tbb/again? workloads=fib,submit -->\nold\n<!-- /g -->\n\n"
            "<!-- g:measured src=comparison.json -->\n<!-- /g -->\n\n"
            "<!-- g:records -->\n<!-- /g -->\n\n"
            "<!-- g:http-table path=/sleep stats=rps,p99_ms -->\n<!-- /g -->\n\n"
            "x <!-- g:http-value subject=coroutines path=/plaintext stat=p99_ratio -->?<!-- /g --> x\n\n"
            "<!-- g:measured src=http.json -->\n<!-- /g -->\n\n"
            "submit <!-- g:cmp-value subject=coroutines workload=submit stat=ns_per_task -->1<!-- /g --> ns.\n\n"
            "```\n<!-- g:nonsense -->an example, not a block<!-- /g -->\n```\n")
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "results", "records"))
        json.dump(record, open(os.path.join(root, "docs/results/records/t.json"), "w"))
        json.dump(comparison, open(os.path.join(root, "docs/results/comparison.json"), "w"))
        json.dump(http, open(os.path.join(root, "docs/results/http.json"), "w"))
        scoped = dict(comparison, meta=dict(comparison["meta"], command="bench/compare.py --subjects coroutines,tbb"))
        json.dump(scoped, open(os.path.join(root, "docs/results/scoped.json"), "w"))
        page += "<!-- g:measured src=scoped.json -->\n<!-- /g -->\n"
        p = os.path.join(root, "page.md")
        open(p, "w").write(page)

        rc, out = call(root, "--check")
        expect(rc == 1 and "-old" in out and "+| coroutines | 0.50 | 0.25 |" in out,
               "--check must fail with a diff on a page whose blocks differ from the data", out)
        rc, out = call(root)
        filled = open(p).read()
        expect(rc == 0 and "fib <!-- g:value src=records/t.json key=coroutines.median_ms fmt=.0f unit=%20ms -->43 ms<!-- /g -->"
               in filled, "g:value must fill 43 ms inline", filled)
        expect("| textbook | 24.1 |\n| tuned | 3 |" in filled and "|---|---:|" in filled, "g:table", filled)
        expect("| futures | n/s | — |" in filled, "g:cmp-table: n/s for unsupported, — for no record", filled)
        expect("| tbb/again |" not in filled, "g:cmp-table: a subject? the run lacks makes no row", filled)
        expect("at commit `def5678`, 2026-01-03, on Test CPU, 2 threads." in filled, "g:measured", filled)
        expect("Measured by `bench/compare.py --subjects coroutines,tbb` at commit `def5678`" in filled,
               "g:measured of a scoped compare.py run names its own command", filled)
        expect("| [`t.json`](records/t.json) | t | 2026-01-02 |" in filled, "g:records", filled)
        expect("| nginx | 500 | 20.00 |\n| futures | cannot serve it by design | |" in filled, "g:http-table", filled)
        expect("x <!-- g:http-value subject=coroutines path=/plaintext stat=p99_ratio -->0.50<!-- /g --> x" in filled,
               "g:http-value: p99 ÷ nginx's", filled)
        expect("Measured by `bench/http/run.py --repeat 3` at commit `fed9876`, 2026-01-04, on test VM." in filled,
               "g:measured of http.json", filled)
        expect("submit <!-- g:cmp-value subject=coroutines workload=submit stat=ns_per_task -->100<!-- /g --> ns"
               in filled, "g:cmp-value", filled)
        expect("an example, not a block" in filled, "a block in fenced code is left alone", filled)
        rc, out = call(root, "--check")
        expect(rc == 0, "--check must pass right after a fill", out)

        open(p, "w").write(filled.replace("| textbook | 24.1 |", "| textbook | 24.0 |"))
        rc, out = call(root, "--check")
        expect(rc == 1 and "-| textbook | 24.0 |" in out and "+| textbook | 24.1 |" in out,
               "--check must catch a drifted table cell", out)

        for bad, says in [("<!-- g:value src=records/t.json key=coroutines.mean_ms -->1<!-- /g -->", "no 'mean_ms'"),
                          ("<!-- g:valeu src=records/t.json key=x -->1<!-- /g -->", "unknown view 'g:valeu'"),
                          ("<!-- g:value src=records/none.json key=x -->1<!-- /g -->", "no such file"),
                          ("<!-- g:value key=x -->1<!-- /g -->", "missing src="),
                          ("<!-- g:cmp-value subject=fibers workload=fib stat=ratio -->1<!-- /g -->", "unknown subject 'fibers'"),
                          ("<!-- g:cmp-value subject=tbb workload=fibb stat=ratio -->1<!-- /g -->", "unknown workload 'fibb'"),
                          ("<!-- g:value src=records/t.json key=coroutines.median_ms colour=red -->1<!-- /g -->", "unknown argument 'colour'"),
                          ("<!-- g:value src=records/t.json key=coroutines.median_ms -->1", "no closing")]:
            open(p, "w").write("# t\n\nline two\n" + bad + "\n")
            rc, out = call(root, "--check")
            expect(rc == 2 and "page.md:4" in out and says in out,
                   f"a bad block must be an error naming page.md:4 and saying '{says}'", out)
    for f in failures:
        print("SELF-TEST FAILED:", f, file=sys.stderr)
    if failures:
        return 1
    print("fill-numbers self-test: a drifted block is caught with a diff, bad blocks are errors naming "
          "page and line, every view fills")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help="pages to fill (paths under --root); default every *.md page")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 with a diff on drift")
    ap.add_argument("--root", default=ROOT, help="the checkout to work on (default: this script's)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not os.path.isdir(os.path.join(args.root, "docs", "results")):
        fail(f"--root {args.root}: no docs/results/ there")
    return run(os.path.abspath(args.root), args.files, args.check)


if __name__ == "__main__":
    sys.exit(main())
