#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reports' layout, on made-up records (nothing is run):
- bench/compare.py: a "not supported" reason is printed once, as a footnote under the summary,
  and every cell it applies to carries the footnote's mark; two reasons get two marks;
- bench/http/run.py: the /sleep row of a server whose pool blocks in the sleep (a driver on
  pools::server::pool_session, as futures) says that it cannot serve the workload by design and
  why, instead of zeros; a server that suspends keeps its numbers.
"""
import argparse
import importlib.util
import sys
from pathlib import Path

from checks import expect, verdict

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))  # bench/progress.py, which compare.py imports


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the module loads
    spec.loader.exec_module(module)
    return module


compare = load("compare", BENCH / "compare.py")
run = load("http_run", BENCH / "http" / "run.py")

NESTED = "nested waits deadlock a fixed pool of blocking threads"
NO_SUSPEND = "a task can only wait by blocking its worker thread"


def record(variant, workload, ns=None, reason=None):
    if reason is not None:
        return {"variant": variant, "workload": workload, "supported": False, "reason": reason}
    return {"variant": variant, "workload": workload, "supported": True, "median_ns": ns, "min_ns": ns,
            "max_ns": ns, "max_rss_kib": 1024, "metrics": {"bytes_per_task": ns}}


def check_compare():
    records = [record("tbb", "fib", 100), record("futures", "fib", reason=NESTED),
               record("futures/textbook", "fib", reason=NESTED), record("coroutines", "fib", 50),
               record("asio_pool", "memory", 200), record("futures", "memory", reason=NO_SUSPEND),
               record("futures/textbook", "memory", reason=NO_SUSPEND), record("coroutines", "memory", 150)]
    args = argparse.Namespace(quick=False, threads=2, reps=1, rounds=1, workloads=["fib", "memory"],
                              baseline=None, build="build")
    meta = {"date": "2026-01-01 00:00", "cpu": "test", "commit": "0000000"}
    md = compare.markdown(records, args, ["coroutines", "futures", "futures/textbook", "tbb", "asio_pool"], meta)
    expect(md.count(NESTED) == 1, "the fork-join reason is printed once")
    expect(md.count(NO_SUSPEND) == 1, "the memory reason is printed once, apart from the fork-join one")
    expect("| futures | n/s¹ | n/s² |" in md, "futures' summary cells carry the marks of their reasons")
    expect("- ¹ futures, futures/textbook (fib): " + NESTED in md, "footnote ¹ names its subjects and workloads")
    expect("- ² futures, futures/textbook (memory): " + NO_SUSPEND in md, "footnote ² names its subjects")
    expect(md.count("not supported¹") == 2 and md.count("not supported²") == 2,
           "each workload table points its unsupported rows at the footnote")
    expect("| coroutines | 0.50 | 0.75 |" in md, "supported cells keep their ratios")


def check_http():
    expect(run.blocks_in_sleep("futures"), "futures' driver blocks a worker in /sleep (pool_session)")
    expect(not run.blocks_in_sleep("coroutines") and not run.blocks_in_sleep("nginx"),
           "coroutines' driver and nginx do not")
    results = [run.Result("nginx", "sleep", 48000.0, 20.0, 27.0, ratio=0.72),
               run.Result("coroutines", "sleep", 45000.0, 16.0, 1080.0, ratio=0.68),
               run.Result("futures", "sleep", 0.0, None, None, ratio=0.0)]
    md = run.markdown(results, [run.SCENARIOS["sleep"]])
    row = next((l for l in md.splitlines() if l.startswith("| futures |")), "")
    expect("cannot serve it by design" in row and "| 0 |" not in row, f"futures' row says why, not zeros: {row}")
    expect("std::this_thread::sleep_for" in md and "server/drivers/futures.cpp" in md,
           "the note under the table names the driver and the blocking call")
    expect("| coroutines | 45,000 | 16.000 | 1080.000 |" in md, "a suspending server keeps its numbers")


check_compare()
check_http()
sys.exit(verdict())
