#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draws traces written by --trace (Chrome Trace Event JSON) as one PNG of per-worker timelines.

    scripts/trace-picture.py OUT.png "title 1" TRACE1.json ["title 2" TRACE2.json ...] [--caption TEXT]

One panel per trace, one row per track (the pool's workers, the bench's or server's main thread):
  - blue bars: tasks a worker ran (a coroutine or fiber run, a queued callable);
    dark ticks: a coroutine or fiber that a finishing one handed the thread to directly;
  - grey bars: the worker parked (asleep in a futex, condition variable or epoll_wait);
  - red arrows: steals, from the worker that queued the item to the thief;
  - green arrows: wake-ups, from the waker to the worker it woke;
  - an orange row below the threads: requests in flight (server traces).
scripts/trace-pictures.sh makes the pictures in docs/pictures/ with it.
"""

import argparse
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TASK, HANDOFF, PARK, STEAL, WAKE, REQ = "#3b6fb6", "#0b2a5b", "#c8c8c8", "#d62728", "#2ca02c", "#ff9f1c"


def load(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    names, order = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    # Workers first (by name), then the other threads.
    tids = sorted(names, key=lambda t: (" worker " not in names[t], names[t]))
    row = {t: i for i, t in enumerate(tids)}
    bars = defaultdict(lambda: defaultdict(list))  # kind -> row -> [(start, width)]
    ticks = defaultdict(list)
    flows = defaultdict(dict)
    requests = []
    for e in events:
        ph, tid = e.get("ph"), e.get("tid")
        if ph == "X" and tid in row and e["name"] in ("task", "park"):
            bars[e["name"]][row[tid]].append((e["ts"] / 1000, max(e["dur"] / 1000, 1e-6)))
        elif ph == "i" and tid in row and e["name"] in ("coroutine resume", "fiber resume"):
            ticks[row[tid]].append(e["ts"] / 1000)
        elif ph in ("s", "f") and tid in row:
            flows[(e["name"], e["id"])][ph] = (e["ts"] / 1000, row[tid])
        elif ph in ("b", "e") and e.get("name") == "request":
            requests.append((e["ts"] / 1000, 1 if ph == "b" else -1))
    return names, tids, bars, ticks, flows, sorted(requests)


def panel(ax, title, path):
    names, tids, bars, ticks, flows, requests = load(path)
    n = len(tids)
    for r in range(n):
        if bars["park"][r]:
            ax.broken_barh(bars["park"][r], (r - 0.35, 0.7), color=PARK, linewidth=0)
        if bars["task"][r]:
            ax.broken_barh(bars["task"][r], (r - 0.3, 0.6), color=TASK, linewidth=0)
        if ticks[r]:
            ax.vlines(ticks[r], r - 0.3, r + 0.3, color=HANDOFF, linewidth=0.3)
    counts = defaultdict(int)
    for (kind, _), ends in flows.items():
        if "s" not in ends or "f" not in ends:
            continue
        (x0, y0), (x1, y1) = ends["s"], ends["f"]
        counts[kind] += 1
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops={"arrowstyle": "->", "color": STEAL if kind == "steal" else WAKE, "lw": 0.9})
    if requests:
        level, xs, ys = 0, [], []
        for x, d in requests:
            level += d
            xs.append(x)
            ys.append(level)
        top = max(ys) or 1
        # The row below the threads, drawn upwards (the y axis is inverted: row 0 on top).
        ax.fill_between(xs, n + 0.4, [n + 0.4 - 0.8 * y / top for y in ys], step="post", color=REQ, linewidth=0)
    labels = [names[t] for t in tids] + ([f"requests in flight (max {top})"] if requests else [])
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("ms", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    summary = ", ".join(f"{v} {k} arrow{'s' if v != 1 else ''}" for k, v in sorted(counts.items())) or "no arrows"
    ax.set_title(f"{title}  ({summary})", fontsize=9, loc="left")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("pairs", nargs="+", help='"title" TRACE.json, repeated')
    ap.add_argument("--caption", default="")
    args = ap.parse_args()
    if len(args.pairs) % 2:
        ap.error("give a title and a trace file for each panel")
    pairs = list(zip(args.pairs[::2], args.pairs[1::2]))
    fig, axes = plt.subplots(len(pairs), 1, figsize=(11, 2.1 * len(pairs) + 0.6), squeeze=False)
    for ax, (title, path) in zip(axes[:, 0], pairs):
        panel(ax, title, path)
    legend = [plt.Rectangle((0, 0), 1, 1, color=c) for c in (TASK, HANDOFF, PARK, STEAL, WAKE, REQ)]
    fig.legend(legend, ["task", "direct hand-off (no queue)", "parked", "steal", "wake", "requests in flight"],
               loc="lower center", ncol=6, fontsize=8, frameon=False)
    if args.caption:
        fig.suptitle(args.caption, fontsize=8, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0.04, 1, 0.97 if args.caption else 1))
    fig.savefig(args.out, dpi=110)
    print(f"trace-picture: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
