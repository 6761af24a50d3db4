#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a trace written by --trace (common/src/trace_export.cpp) against the Trace Event format.

    tests/check-trace.py FILE.json [--workers N] [--steals | --no-steals] [--requests] [--balanced]
    tests/check-trace.py --self-test FILE.json

What must hold for Perfetto and chrome://tracing to show the file as the pools meant it:
  - it parses as JSON: {"traceEvents": [...]}, each event with a known phase (X slice, i instant,
    s/f flow, b/e async slice, C counter, M metadata) and the fields that phase needs;
  - on each track (tid) the timestamps never go back, and the slices nest: one that starts
    inside another ends inside it too (a task cannot outlive the park it started in);
  - every track has a name (an "M" thread_name);
  - every flow arrow has one tail ("s") and one head ("f"), the tail inside a slice of its track,
    the head inside one ("bp": "e") or before the next one on its track: an arrow whose end binds
    to nothing is dropped by the viewer;
  - every async slice ("b", connection or request) has its end ("e") with the same id, later.
Options add what a given run must show: --workers N tracks named "... worker K", --steals at least
one steal arrow (the work-stealing pools), --no-steals no steal at all (one shared queue),
--requests at least one request slice (a server run), --balanced every item posted in the file
run in it (task slices plus direct coroutine hand-offs = posts; a task already running when the
window opened, "carried", is not counted; the whole-run traces of a bench repetition or a
server, with no ring overflowed: otherData.truncated_tracks == 0).

--self-test breaks copies of a good file in several ways; each broken copy must fail.
Exit status: 0 when the file passes, 1 when it does not (each problem printed), 2 on bad usage.
"""

import argparse
import json
import re
import sys
from collections import defaultdict

PHASES = {"X", "i", "s", "f", "b", "e", "C", "M"}
NO_STEALS = "no steal arrow, expected some (a work-stealing pool)"
EPS = 1e-6  # microseconds: the export writes nanoseconds / 1000 as doubles


NOT_BALANCED = "tasks run ({}) differ from items posted ({})"


def check(doc, workers=None, steals=None, requests=False, balanced=False):
    """Returns the list of problems (empty: the trace passes) and a one-line summary."""
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ['not a Trace Event file: no "traceEvents" list'], ""
    events = doc["traceEvents"]
    names = {}
    by_tid = defaultdict(list)
    flows = defaultdict(lambda: {"s": [], "f": []})
    asyncs = defaultdict(lambda: {"b": [], "e": []})
    counters = 0
    last_ts = {}
    for n, e in enumerate(events):
        where = f"event {n}"
        ph = e.get("ph")
        if ph not in PHASES:
            problems.append(f"{where}: unknown phase {ph!r}")
            continue
        if ph == "M":
            if e.get("name") == "thread_name":
                names[e.get("tid")] = e.get("args", {}).get("name")
            continue
        if not isinstance(e.get("ts"), (int, float)) or "tid" not in e or "pid" not in e:
            problems.append(f"{where} ({ph}): needs numeric ts, pid and tid")
            continue
        tid, ts = e["tid"], e["ts"]
        if ts + EPS < last_ts.get(tid, float("-inf")):
            problems.append(f"{where}: track {tid} goes back in time ({ts} after {last_ts[tid]})")
        last_ts[tid] = max(ts, last_ts.get(tid, ts))
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                problems.append(f"{where}: slice {e.get('name')!r} without a duration >= 0")
                continue
            by_tid[tid].append((ts, ts + e["dur"], e.get("name")))
        elif ph in "sf":
            flows[e.get("id")][ph].append((tid, ts, e.get("name"), e.get("bp")))
        elif ph in "be":
            asyncs[(e.get("cat"), e.get("name"), e.get("id"))][ph].append(ts)
        elif ph == "C":
            counters += 1
            args = e.get("args", {})
            if not args or not all(isinstance(v, (int, float)) for v in args.values()):
                problems.append(f"{where}: counter {e.get('name')!r} without numeric values")

    for tid in sorted(set(by_tid) | set(last_ts)):
        if not names.get(tid):
            problems.append(f"track {tid} has no thread_name")
    slices = 0
    for tid, sl in by_tid.items():
        sl.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        slices += len(sl)
        stack = []
        for b, e, name in sl:
            while stack and stack[-1][1] <= b + EPS:
                stack.pop()
            if stack and e > stack[-1][1] + EPS:
                problems.append(f"track {tid} ({names.get(tid)}): slice {name!r} [{b}, {e}] starts inside "
                                f"{stack[-1][2]!r} [{stack[-1][0]}, {stack[-1][1]}] and ends after it")
            stack.append((b, e, name))

    def inside(tid, ts):
        return any(b - EPS <= ts <= e + EPS for b, e, _ in by_tid.get(tid, []))

    def next_slice(tid, ts):
        return any(b + EPS >= ts for b, _, _ in by_tid.get(tid, []))

    kinds = defaultdict(int)
    for fid, ends in flows.items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            problems.append(f"flow {fid}: {len(ends['s'])} tail(s), {len(ends['f'])} head(s); needs one each")
            continue
        (stid, sts, sname, _), (ftid, fts, fname, bp) = ends["s"][0], ends["f"][0]
        kinds[sname] += 1
        if sname != fname:
            problems.append(f"flow {fid}: tail {sname!r} and head {fname!r} differ")
        if not inside(stid, sts):
            problems.append(f"flow {fid} ({sname}): its tail at {sts} is in no slice of track {stid}")
        if bp == "e" and not inside(ftid, fts):
            problems.append(f"flow {fid} ({fname}): its head at {fts} is in no slice of track {ftid}")
        if bp != "e" and not next_slice(ftid, fts):
            problems.append(f"flow {fid} ({fname}): no slice of track {ftid} begins after its head at {fts}")
        if fts + EPS < sts:
            problems.append(f"flow {fid} ({sname}): its head ({fts}) is before its tail ({sts})")
    for key, ends in asyncs.items():
        if len(ends["b"]) != len(ends["e"]):
            problems.append(f"async slice {key}: {len(ends['b'])} begin(s), {len(ends['e'])} end(s)")
        elif any(e + EPS < b for b, e in zip(sorted(ends["b"]), sorted(ends["e"]))):
            problems.append(f"async slice {key}: ends before it begins")

    worker_tracks = [n for n in names.values() if n and re.search(r" worker \d+$", n)]
    steal_instants = sum(1 for e in events if e.get("ph") == "i" and e.get("name") == "steal")
    if workers is not None and len(worker_tracks) < workers:
        problems.append(f"{len(worker_tracks)} worker track(s), expected at least {workers}")
    if steals is True and kinds.get("steal", 0) == 0:
        problems.append(NO_STEALS)
    if steals is False and (kinds.get("steal", 0) or steal_instants):
        problems.append(f"{steal_instants} steal(s), expected none (one shared queue)")
    requests_seen = sum(len(v["b"]) for k, v in asyncs.items() if k[1] == "request")
    if requests and requests_seen == 0:
        problems.append("no request slice, expected some (a server run)")
    tasks = sum(
        1 for e in events if (e.get("ph") == "X" and e.get("name") == "task" and not e.get("args", {}).get("carried"))
        or (e.get("ph") == "i" and e.get("name") == "coroutine resume"))
    posts = sum(1 for e in events if e.get("ph") == "i" and e.get("name") == "post")
    if balanced:
        truncated = doc.get("otherData", {}).get("truncated_tracks")
        if truncated != 0:
            problems.append(f"rings overflowed on {truncated} thread(s): counts are partial (record a shorter run)")
        elif tasks != posts:
            problems.append(NOT_BALANCED.format(tasks, posts))
    summary = (f"{len(events)} events, {tasks} tasks run, {posts} posted, {len(names)} tracks ({len(worker_tracks)} workers), {slices} slices, "
               f"{sum(kinds.values())} arrows ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items())) or 'none'}), "
               f"{sum(len(v['b']) for v in asyncs.values())} async slices ({requests_seen} requests), "
               f"{counters} counter samples")
    return problems, summary


def self_test(doc):
    """Each mutation of a good trace must fail; returns the number that passed wrongly."""
    ev = doc["traceEvents"]

    def first(pred):
        for i, e in enumerate(ev):
            if pred(e):
                return i
        return None

    mutations = {}
    i = first(lambda e: e.get("ph") == "f")
    if i is not None:
        mutations["a flow without its head"] = lambda d, i=i: d["traceEvents"].pop(i)
    i = first(lambda e: e.get("ph") == "X")
    if i is not None:
        mutations["a slice ending after its parent"] = lambda d, i=i: d["traceEvents"].append(
            dict(d["traceEvents"][i], ts=d["traceEvents"][i]["ts"] + d["traceEvents"][i]["dur"] / 2,
                 dur=d["traceEvents"][i]["dur"] + 1000))
        mutations["time going back on a track"] = lambda d, i=i: d["traceEvents"].append(
            dict(d["traceEvents"][i], ph="i", s="t", ts=-1.0))
    i = first(lambda e: e.get("ph") == "M" and e.get("name") == "thread_name")
    if i is not None:
        mutations["a track without a name"] = lambda d, i=i: d["traceEvents"].pop(i)
    i = first(lambda e: e.get("ph") == "b")
    if i is not None:
        mutations["an async slice without its end"] = lambda d, i=i: d["traceEvents"].append(dict(d["traceEvents"][i]))
    balanced = not check(doc, balanced=True)[0]  # the good file's counts are whole: check them too
    i = first(lambda e: e.get("ph") == "i" and e.get("name") == "post")
    if i is not None and balanced:
        mutations["a post whose task never ran"] = lambda d, i=i: d["traceEvents"].append(dict(d["traceEvents"][i]))
    mutations["an unknown phase"] = lambda d: d["traceEvents"].append({"ph": "Q", "ts": 0, "pid": 1, "tid": 0})
    wrong = 0
    for what, mutate in mutations.items():
        broken = dict(doc, traceEvents=list(ev))  # the mutations add or drop events, never edit one
        mutate(broken)
        problems, _ = check(broken, balanced=balanced)
        print(f"self-test: {what}: {'fails, as it must' if problems else 'PASSES: the checker missed it'}")
        wrong += not problems
    return wrong, len(mutations)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", help="a trace written by bench_<x> or server_<x> --trace")
    ap.add_argument("--workers", type=int, help="at least this many worker tracks")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--steals", action="store_const", const=True, dest="steals", help="expect steal arrows")
    group.add_argument("--no-steals", action="store_const", const=False, dest="steals", help="expect no steal")
    ap.add_argument("--requests", action="store_true", help="expect request slices (a server run)")
    ap.add_argument("--balanced", action="store_true", help="expect tasks run = items posted")
    ap.add_argument("--self-test", action="store_true", help="break copies of FILE; each must fail")
    args = ap.parse_args()
    try:
        with open(args.file, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"check-trace: {args.file}: {e}", file=sys.stderr)
        return 1
    problems, summary = check(doc, args.workers, args.steals, args.requests, args.balanced)
    if problems:
        for p in problems[:20]:
            print(f"check-trace: {args.file}: {p}", file=sys.stderr)
        if len(problems) > 20:
            print(f"check-trace: ... and {len(problems) - 20} more", file=sys.stderr)
        return 1
    print(f"check-trace: {args.file}: OK: {summary}")
    if args.self_test:
        wrong, total = self_test(doc)
        if wrong:
            print(f"check-trace: self-test: {wrong} of {total} broken copies passed", file=sys.stderr)
            return 1
        print(f"check-trace: self-test: all {total} broken copies fail")
    return 0


if __name__ == "__main__":
    sys.exit(main())
