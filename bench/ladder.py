#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The ladder's numbers: each variant's textbook pool beside its tuned pool, from one compare run.

  python3 bench/ladder.py bench/results/ladder/results.json > ladder.md

Reads a bench/compare.py results.json that measured, in the same run, the tuned pools (futures,
coroutines, fibers, reactor), their textbook pools (<variant>/textbook), any flavours that switch
one optimisation off (coroutines/nocache, reactor/shared) and the references. Prints, per variant,
one Markdown table: each workload's value for the textbook and the tuned pool, textbook ÷ tuned
(what the whole ladder buys; for time, ns and bytes above 1 means the tuned pool is faster), the
flavours ÷ tuned, the tuned pool ÷ its reference, and the run's noise floor (<reference>/again ÷
<reference>: asio_pool/again or tbb/again, for the workloads run in rounds). Its tables for one run are
kept in docs/results/records/ladder.json, from which docs/optimizations.md is generated.
"""
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from compare import MEASURE, human, value_of  # noqa: E402  (the same reading as the comparison)

VARIANTS = ["futures", "coroutines", "fibers", "reactor"]


def table(by, variant, workloads, subjects):
    flavours = [s for s in subjects if s.startswith(variant + "/") and s != variant + "/textbook"]
    head = ["workload", "textbook", "tuned", "**textbook ÷ tuned**"] + [f"{f} ÷ tuned" for f in flavours] + \
           ["tuned ÷ reference", "noise floor"]
    rows = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for w in workloads:
        key, unit, better, ref = MEASURE[w]
        tuned, textbook = value_of(by.get((variant, w), {}), w), value_of(by.get((variant + "/textbook", w), {}), w)
        if tuned is None and textbook is None:
            continue
        refv = value_of(by.get((ref, w), {}), w)
        again = value_of(by.get((ref + "/again", w), {}), w)
        ratio = (lambda a, b: f"{a / b:.2f}" if a is not None and b else "—")
        cells = [f"{w} ({unit}, {better} is better)", human(textbook, unit), human(tuned, unit),
                 f"**{ratio(textbook, tuned)}**"]
        cells += [ratio(value_of(by.get((f, w), {}), w), tuned) for f in flavours]
        cells += [f"{ratio(tuned, refv)} ÷{ref}", ratio(again, refv) if again is not None else "—"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.load(open(sys.argv[1]))
    records = data["records"]
    by = {(r["variant"], r["workload"]): r for r in records}
    subjects = list(dict.fromkeys(r["variant"] for r in records))
    workloads = list(dict.fromkeys(r["workload"] for r in records))
    meta = data["meta"]
    print(f"From `{sys.argv[1]}`: {meta['date']}, commit {meta['commit']}, {meta['cpu']}, "
          f"{data['threads']} threads, {data['reps']} reps, {data['rounds']} rounds.\n")
    for v in VARIANTS:
        if (v, workloads[0]) not in by and not any(k[0] == v for k in by):
            continue
        print(f"### {v}\n")
        print("\n".join(table(by, v, workloads, subjects)))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
