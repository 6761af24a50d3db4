#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs a bench or a server of a -DPOOLS_TRACE=ON build with --trace, then checks the file.

    tests/trace-run.py bench  BUILD/variants/coroutines/bench_coroutines OUT.json [--textbook]
                              [--workload fib --n 18] [check-trace options]
    tests/trace-run.py server BUILD/server/server_reactor OUT.json [--textbook is refused]
                              [--requests 200] [check-trace options]

bench: a warm-up and one traced repetition of the workload on 2 threads (POOLS_BENCH_POOL=textbook with --textbook).
server: the server on a free port with 2 threads, a short mixed load from 4 keep-alive clients
(/plaintext, /fib?n=20, /sleep?ms=2, /busy?ms=1), then SIGTERM; the server writes the trace as it
exits. Either way the file is then checked by tests/check-trace.py (its options: --workers,
--steals / --no-steals, --balanced, and --expect-requests for its --requests), and the checker's self-test
breaks copies of the file that must fail it. Exit status 0 when the run and the checks pass. Used by the trace_* ctests and by scripts/trace-pictures.sh.
"""

import argparse
import http.client
import importlib.util
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import threading

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("check_trace", HERE / "check-trace.py")
check_trace = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_trace)

PATHS = ["/plaintext", "/fib?n=20", "/sleep?ms=2", "/busy?ms=1"]


def run_bench(args):
    env = dict(os.environ)
    if args.textbook:
        env["POOLS_BENCH_POOL"] = "textbook"
    # Two repetitions, the trace keeps the second: both workers are awake and stealing by then.
    cmd = [args.exe, "--workload", args.workload, "--threads", "2", "--reps", "1", "--warmup", "1",
           "--trace", args.out]
    if args.n is not None:
        cmd += ["--n", str(args.n)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    return done.returncode


def client(host, port, count, errors):
    try:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        for i in range(count):
            conn.request("GET", PATHS[i % len(PATHS)])
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                errors.append(f"{PATHS[i % len(PATHS)]}: status {resp.status}")
        conn.close()
    except (OSError, http.client.HTTPException) as e:
        errors.append(f"client: {e}")


def run_server(args):
    cmd = [args.exe, "--port", "0", "--threads", "2", "--trace", args.out]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.match(r"listening on (.+):(\d+)$", line.strip())
        if not m:
            print(f"trace-run: the server did not say where it listens: {line!r}", file=sys.stderr)
            return 1
        host, port = m.group(1).strip("[]"), int(m.group(2))
        errors = []
        threads = [threading.Thread(target=client, args=(host, port, args.requests // 4, errors)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=args.timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The server's summary table is on its stderr, with its logs.
    sys.stdout.write("".join(l + "\n" for l in err.splitlines() if not re.match(r"^\d{4}-\d\d-\d\dT", l)))
    if proc.returncode != 0 or errors:
        sys.stderr.write(err)
        for e in errors[:10]:
            print(f"trace-run: {e}", file=sys.stderr)
        return proc.returncode or 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=["bench", "server"])
    ap.add_argument("exe")
    ap.add_argument("out")
    ap.add_argument("--textbook", action="store_true", help="bench: the variant's textbook pool")
    ap.add_argument("--workload", default="fib")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--requests", type=int, default=200, help="server: requests in all")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--workers", type=int)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--steals", action="store_const", const=True, dest="steals")
    group.add_argument("--no-steals", action="store_const", const=False, dest="steals")
    ap.add_argument("--expect-requests", action="store_true", dest="expect_requests")
    ap.add_argument("--balanced", action="store_true", help="tasks run = items posted (check-trace.py)")
    args = ap.parse_args()
    if args.kind == "server" and args.textbook:
        ap.error("--textbook is for bench runs: a server driver runs its variant's tuned pool")
    # A steal needs the second worker on a core while the first one forks: on a loaded machine
    # (ctest -j2 beside a heavy test) a run of a few milliseconds can miss it. So a run without
    # steals is repeated, three times at most; any other problem fails at once.
    for attempt in range(1, 4):
        rc = run_bench(args) if args.kind == "bench" else run_server(args)
        if rc != 0:
            print(f"trace-run: {args.exe} exited with {rc}", file=sys.stderr)
            return 1
        with open(args.out, encoding="utf-8") as f:
            doc = json.load(f)
        problems, summary = check_trace.check(doc, args.workers, args.steals, args.expect_requests, args.balanced)
        if not (args.steals and problems == [check_trace.NO_STEALS]):
            break
        print(f"trace-run: attempt {attempt}: {check_trace.NO_STEALS}")
    for p in problems[:20]:
        print(f"trace-run: {args.out}: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"trace-run: {args.out}: OK: {summary}")
    # And the checker itself: broken copies of this file must fail it.
    wrong, total = check_trace.self_test(doc)
    if wrong:
        print(f"trace-run: check-trace's self-test: {wrong} of {total} broken copies passed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
