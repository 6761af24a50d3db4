#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The ladder's numbers: each variant's textbook pool beside its tuned pool, from one compare run.

  python3 bench/ladder.py RESULTS_JSON > ladder.md          # the per-variant Markdown tables
  python3 bench/ladder.py --record OUT.json RESULTS_JSON    # the same, as a docs/results record

Reads a bench/compare.py results.json that measured, in the same run, the tuned pools (futures,
coroutines, fibers, reactor), their textbook pools (<variant>/textbook), any flavours that switch
one optimisation off (coroutines/nocache, reactor/shared...) and the references. Prints, per
variant, one Markdown table: each workload's value for the textbook and the tuned pool, textbook ÷
tuned (what the whole ladder buys; for time, ns and bytes above 1 means the tuned pool is faster),
the flavours ÷ tuned, the tuned pool ÷ its reference, and the run's noise floor (<reference>/again
÷ <reference>: tbb/again for fork-join and asio_pool/again for the per-task workloads).

--record writes those tables and their numbers as a record (docs/results/README.md, "Records"):
the published one, docs/results/records/ladder.json, is made from the published comparison
(docs/results/comparison.json), so docs/optimizations.md shows the numbers of the shipped code,
the same ones the comparison shows. Its values:
  ladder.<variant>.<workload>: textbook_over_tuned, <flavour with / as _>_over_tuned,
    tuned_over_reference, noise_floor (where the reference ran twice);
  subjects.<subject with / as _>.<workload>: value (ms for fork-join, ns per task for submit and
    submit_future, p50 ns for wakeup, bytes per task for memory, speedup for vector_fill), ratio
    (to the same-run reference) and max_rss_mib.
Every ratio is rounded to two places, as the tables print it, so a value on a page and the table
beside it agree.
"""
import argparse
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from compare import MEASURE, human, value_of  # noqa: E402  (the same reading as the comparison)

VARIANTS = ["futures", "coroutines", "fibers", "reactor"]
AGAIN = "/again"


def ratio(a, b):
    """a ÷ b to two places, as every table prints it; None when either is missing."""
    return round(a / b, 2) if a is not None and b else None


def cell(x):
    return f"{x:.2f}" if x is not None else "—"


class Run:
    """One compare results.json, read the way bench/compare.py reports it."""

    def __init__(self, data):
        self.data = data
        self.by = {(r["variant"], r["workload"]): r for r in data["records"]}
        self.subjects = list(dict.fromkeys(r["variant"] for r in data["records"]))
        self.workloads = list(dict.fromkeys(r["workload"] for r in data["records"]))
        self.variants = [v for v in VARIANTS if any(k[0] == v for k in self.by)]

    def value(self, subject, workload):
        return value_of(self.by.get((subject, workload), {}), workload)

    def flavours(self, variant):
        return [s for s in self.subjects if s.startswith(variant + "/") and s != variant + "/textbook"]

    def ladder(self, variant, workload):
        """The numbers of one row of a variant's table, or None when neither pool ran it."""
        ref = MEASURE[workload][3]
        tuned, textbook = self.value(variant, workload), self.value(variant + "/textbook", workload)
        if tuned is None and textbook is None:
            return None
        refv, again = self.value(ref, workload), self.value(ref + AGAIN, workload)
        return {"textbook": textbook, "tuned": tuned, "textbook_over_tuned": ratio(textbook, tuned),
                "flavours": {f: ratio(self.value(f, workload), tuned) for f in self.flavours(variant)},
                "tuned_over_reference": ratio(tuned, refv), "reference": ref,
                "noise_floor": ratio(again, refv) if again is not None else None}

    def table(self, variant):
        """(columns, rows) of the variant's table, every cell a string."""
        flavours = self.flavours(variant)
        columns = ["workload", "textbook", "tuned", "**textbook ÷ tuned**"] + \
                  [f"{f} ÷ tuned" for f in flavours] + ["tuned ÷ reference", "noise floor"]
        rows = []
        for w in self.workloads:
            row = self.ladder(variant, w)
            if row is None:
                continue
            _, unit, better, ref = MEASURE[w]
            rows.append([f"{w} ({unit}, {better} is better)", human(row["textbook"], unit), human(row["tuned"], unit),
                         f"**{cell(row['textbook_over_tuned'])}**"] + [cell(row["flavours"][f]) for f in flavours] +
                        [f"{cell(row['tuned_over_reference'])} ÷{ref}", cell(row["noise_floor"])])
        return columns, rows

    def ladder_subjects(self):
        """The subjects of the ladder: each variant, its textbook pool and flavours, the references
        of the workloads and their second runs (the noise floor)."""
        refs = list(dict.fromkeys(MEASURE[w][3] for w in self.workloads))
        keep = set(self.variants) | {f for v in self.variants for f in self.flavours(v) + [v + "/textbook"]} | \
            set(refs) | {r + AGAIN for r in refs}
        return [s for s in self.subjects if s in keep]

    def summary(self):
        """Each ladder subject's ratio to the same-run reference, as compare.py's summary."""
        columns = ["subject"] + [f"{w} (÷{MEASURE[w][3]})" for w in self.workloads]
        rows = []
        for s in self.ladder_subjects():
            cells = [s]
            for w in self.workloads:
                r, measured = self.by.get((s, w)), self.to_reference(s, w)
                cells.append(measured[1] if measured else "—" if r is None or r.get("skipped") else "n/s")
            rows.append(cells)
        return {"columns": columns, "rows": rows}

    def to_reference(self, subject, workload):
        """(value, value ÷ the same-run reference) of one subject's run; None when it has no value."""
        r = self.by.get((subject, workload))
        v = value_of(r, workload) if r else None
        return None if v is None else (v, ratio(v, self.value(MEASURE[workload][3], workload)))

    def subject_values(self):
        out = {}
        for s in self.ladder_subjects():
            for w in self.workloads:
                measured = self.to_reference(s, w)
                if measured is None:
                    continue
                v, to_ref = measured
                out.setdefault(s.replace("/", "_"), {})[w] = {
                    "value": round(v / 1e6, 3) if MEASURE[w][1] == "time" else round(v, 3),
                    "ratio": to_ref,
                    "max_rss_mib": round(self.by[(s, w)]["max_rss_kib"] / 1024, 1)}
        return out

    def ladder_values(self):
        out = {}
        for v in self.variants:
            for w in self.workloads:
                row = self.ladder(v, w)
                if row is None:
                    continue
                entry = {"textbook_over_tuned": row["textbook_over_tuned"]}
                entry.update({f"{f.replace('/', '_')}_over_tuned": x for f, x in row["flavours"].items() if x is not None})
                entry["tuned_over_reference"] = row["tuned_over_reference"]
                if row["noise_floor"] is not None:
                    entry["noise_floor"] = row["noise_floor"]
                out.setdefault(v, {})[w] = {k: x for k, x in entry.items() if x is not None}
        return out


def markdown(run, source):
    meta, data = run.data["meta"], run.data
    lines = ["# The ladder: each textbook pool against its tuned pool", "",
             f"Made by `python3 bench/ladder.py {source}` from the run of {meta['date']}, commit "
             f"{meta['commit']}, {meta['cpu']}, {data['threads']} threads, {data['reps']} reps, "
             f"{data['rounds']} rounds. Above 1, textbook ÷ tuned and flavour ÷ tuned mean the tuned pool "
             "is faster (for time, ns and bytes; for speedup the other way round); the noise floor is "
             "the reference's second run ÷ the reference, in the same rounds.", ""]
    for v in run.variants:
        columns, rows = run.table(v)
        lines += [f"## {v}", "", "| " + " | ".join(columns) + " |", "|---|" + "---:|" * (len(columns) - 1)]
        lines += ["| " + " | ".join(r) + " |" for r in rows] + [""]
    return "\n".join(lines[:-1])


def record(run, source, out):
    meta, data = run.data["meta"], run.data
    if data.get("quick"):
        raise SystemExit(f"ladder.py: {source} is a quick run; a record is made from a full one")
    return {
        "title": "The ladder: every textbook pool, tuned pool, flavour and reference in one compare run",
        "command": f"python3 bench/ladder.py --record {out} {source}",
        "commit": meta["commit"],
        "date": meta["date"].split(" ")[0],
        "machine": meta.get("machine", meta["cpu"]),
        "values": {"subjects": run.subject_values(), "ladder": run.ladder_values()},
        "tables": {"summary": run.summary(),
                   **{v: dict(zip(("columns", "rows"), run.table(v))) for v in run.variants}},
        "notes": (f"Made by bench/ladder.py from {source}, bench/compare.py's results.json of the published "
                  f"comparison (./scripts/compare.sh --full: {data['threads']} threads, {data['reps']} reps, "
                  f"every workload but vector_fill and memory a median of {data['rounds']} interleaved rounds; "
                  f"started {meta['date']} UTC). Units: values.subjects.<subject>.<workload>.value is ms for "
                  "fib/skynet/nqueens/matmul, ns per task for submit/submit_future, p50 ns for wakeup, bytes "
                  "per task for memory, speedup for vector_fill; ratio is to the same-run reference (tbb for "
                  "fork-join and vector_fill, asio_pool for the rest). Subject names use _ for /. "
                  "values.ladder.<variant>.<workload>: textbook ÷ tuned, flavour ÷ tuned, tuned ÷ reference "
                  "and the noise floor (tbb/again ÷ tbb, asio_pool/again ÷ asio_pool, where the reference "
                  "ran twice in the same rounds)."),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a bench/compare.py results.json")
    ap.add_argument("--record", metavar="OUT", help="write the docs/results record to OUT instead of printing tables")
    args = ap.parse_args()
    run = Run(json.load(open(args.results)))
    if args.record:
        with open(args.record, "w") as f:
            json.dump(record(run, args.results, args.record), f, indent=2, ensure_ascii=False)
            f.write("\n")
    else:
        print(markdown(run, args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
