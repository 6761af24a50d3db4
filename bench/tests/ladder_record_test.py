#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/ladder.py: its numbers on made-up records (nothing is run), and the published ladder.

- On made-up records: textbook ÷ tuned, flavour ÷ tuned, tuned ÷ reference and the noise floor
  are the values' ratios rounded as the tables print them; a flavour that skipped a workload has no
  key there; a workload neither pool ran has no row; a quick run makes no record.
- Published: docs/results/records/ladder.json and docs/results/ladder.md are what bench/ladder.py
  makes from docs/results/comparison.json, so the ladder on docs/optimizations.md shows the
  published comparison's numbers and nothing else.
"""
import json
import sys
from pathlib import Path

from checks import expect, verdict

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import ladder  # noqa: E402


def rec(variant, workload, value=None, skipped=False):
    if value is None:
        return {"variant": variant, "workload": workload, "supported": False, "skipped": skipped, "reason": "x"}
    metrics = {"ns_per_task": value} if workload == "submit" else {}
    return {"variant": variant, "workload": workload, "supported": True, "median_ns": value * 1e6,
            "min_ns": value * 1e6, "max_ns": value * 1e6, "max_rss_kib": 2048, "metrics": metrics}


def check_made_up():
    records = [rec("coroutines", "fib", 20), rec("coroutines/textbook", "fib", 500), rec("coroutines/nocache", "fib", 35),
               rec("tbb", "fib", 60), rec("tbb/again", "fib", 59),
               rec("coroutines", "submit", 100), rec("coroutines/textbook", "submit", 240),
               rec("coroutines/nocache", "submit", None, skipped=True),
               rec("asio_pool", "submit", 400), rec("asio_pool/again", "submit", 560),
               rec("futures", "submit", 50), rec("futures", "fib", None), rec("futures/textbook", "fib", None)]
    data = {"meta": {"date": "2026-01-01 00:00", "cpu": "test", "commit": "0000000", "machine": "test VM"},
            "threads": 2, "reps": 3, "rounds": 3, "quick": False, "records": records}
    run = ladder.Run(data)
    r = ladder.record(run, "in.json", "out.json")
    fib = r["values"]["ladder"]["coroutines"]["fib"]
    expect(fib == {"textbook_over_tuned": 25.0, "coroutines_nocache_over_tuned": 1.75,
                   "tuned_over_reference": 0.33, "noise_floor": 0.98}, f"coroutines fib's ladder values ({fib})")
    submit = r["values"]["ladder"]["coroutines"]["submit"]
    expect("coroutines_nocache_over_tuned" not in submit and submit["noise_floor"] == 1.4,
           f"a skipped flavour has no key; the noise floor is asio_pool/again ÷ asio_pool ({submit})")
    expect("fib" not in r["values"]["ladder"]["futures"], "a workload neither futures pool ran has no row")
    sub = r["values"]["subjects"]["coroutines_textbook"]["fib"]
    expect(sub == {"value": 500.0, "ratio": 8.33, "max_rss_mib": 2.0}, f"subject values in ms, ratio, MiB ({sub})")
    rows = r["tables"]["coroutines"]["rows"]
    expect(rows[0] == ["fib (time, lower is better)", "500.00 ms", "20.00 ms", "**25.00**", "1.75", "0.33 ÷tbb", "0.98"],
           f"the coroutines table's fib row ({rows[0]})")
    expect(rows[1][4] == "—", "a skipped flavour's cell is a dash")
    summary = {row[0]: row[1:] for row in r["tables"]["summary"]["rows"]}
    expect(summary["futures"][0] == "n/s" and summary["coroutines"][0] == 0.33, f"the summary's cells ({summary})")
    expect(r["commit"] == "0000000" and r["date"] == "2026-01-01" and r["machine"] == "test VM"
           and r["command"] == "python3 bench/ladder.py --record out.json in.json", "the record's provenance is the run's")
    data["quick"] = True
    try:
        ladder.record(ladder.Run(data), "in.json", "out.json")
        expect(False, "a quick run makes no record")
    except SystemExit:
        expect(True, "a quick run makes no record")


def check_published():
    source, out = "docs/results/comparison.json", "docs/results/records/ladder.json"
    run = ladder.Run(json.loads((ROOT / source).read_text()))
    made = json.loads(json.dumps(ladder.record(run, source, out), ensure_ascii=False))
    published = json.loads((ROOT / out).read_text())
    expect(made == published, f"{out} is `python3 bench/ladder.py --record {out} {source}` (regenerate it)")
    md = ladder.markdown(run, source) + "\n"
    expect(md == (ROOT / "docs/results/ladder.md").read_text(),
           f"docs/results/ladder.md is `python3 bench/ladder.py {source}` (regenerate it)")


if __name__ == "__main__":
    check_made_up()
    check_published()
    sys.exit(verdict())
