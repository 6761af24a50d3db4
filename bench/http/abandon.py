#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A flood of abandoned /sleep requests: how soon does a server get its capacity back?

Each server (build/server/server_<name>, --threads 2) is started on a free port; then:
  1. baseline: 20 requests of /sleep?ms=1, one connection each; their median latency;
  2. the flood: --flood clients connect, send GET /sleep?ms=5000 and close at once;
  3. freed: /stats is polled until no job is in flight (jobs.in_flight == 0, with every flood
     request started): the time from the flood's last close, or nothing within --limit seconds;
  4. after: one /sleep?ms=1 right after the flood (bounded by --limit), then 20 more, median.
A server that cancels a job when its client leaves (server/README.md, "A client that leaves")
frees the flood's capacity at once; one that does not holds its jobs for the full 5 s (and the
futures server, whose workers block in each sleep, makes the next request wait behind them all).

  python3 bench/http/abandon.py --build build [--servers futures fibers coroutines reactor]
      [--flood 200] [--limit 12] [--baseline-build DIR --baseline-label TEXT] [--record FILE]

--baseline-build runs the same on the servers of another build (say, of a commit before
cancellation) and adds them to the table. --record writes a docs/results/records/ file (command,
commit, date, machine, load average, values, table). Standard library only; every process and
every request is bounded in time.
"""
import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time

SLEEP_MS = 5000


def request(port, target, timeout):
    """One GET on a fresh connection; returns (status, body) or raises on a timeout."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def timed_ms(port, target, timeout):
    start = time.monotonic()
    try:
        status, _ = request(port, target, timeout)
    except (socket.timeout, OSError):
        return None
    return (time.monotonic() - start) * 1000 if status == 200 else None


def stats(port):
    return json.loads(request(port, "/stats", 10)[1])


def flood(port, n):
    request_bytes = f"GET /sleep?ms={SLEEP_MS} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(request_bytes)
        s.close()


def measure(exe, n, limit):
    server = subprocess.Popen([exe, "--port", "0", "--threads", "2", "--shutdown-timeout-ms", "1000"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = server.stdout.readline().strip()
        if not line.startswith("listening on "):
            raise SystemExit(f"{exe}: did not start ({line!r})")
        port = int(line.rsplit(":", 1)[1])
        probe = "/sleep?ms=1"
        before = [timed_ms(port, probe, limit) for _ in range(20)]
        started_before = stats(port)["jobs"]["started"]
        flood(port, n)
        flooded = time.monotonic()
        freed_ms = None
        while time.monotonic() - flooded < limit:
            jobs = stats(port)["jobs"]
            if jobs["started"] - started_before >= n and jobs["in_flight"] == 0:
                freed_ms = (time.monotonic() - flooded) * 1000
                break
            time.sleep(0.005)
        first_after = timed_ms(port, probe, limit)
        after = [timed_ms(port, probe, limit) for _ in range(20)]
        jobs = stats(port)["jobs"]
        return {
            "freed_ms": None if freed_ms is None else round(freed_ms, 1),
            "probe_before_p50_ms": round(statistics.median(x for x in before if x is not None), 2),
            "probe_first_after_ms": None if first_after is None else round(first_after, 2),
            "probe_after_p50_ms": round(statistics.median(x for x in after if x is not None), 2)
            if any(x is not None for x in after) else None,
            "jobs_in_flight_at_end": jobs["in_flight"],
            "jobs_cancelled": jobs.get("cancelled"),
        }
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def fmt_ms(v, limit):
    return f"> {limit * 1000:,.0f}" if v is None else f"{v:,.1f}"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    cpus = os.cpu_count()
    distro = ""
    try:
        with open("/etc/os-release") as f:
            fields = dict(l.rstrip().split("=", 1) for l in f if "=" in l)
            distro = fields.get("PRETTY_NAME", "").strip('"')
    except OSError:
        pass
    return f"{cpus} vCPU {model}, {distro or platform.system()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--servers", nargs="+", default=["futures", "fibers", "coroutines", "reactor"])
    ap.add_argument("--flood", type=int, default=200)
    ap.add_argument("--limit", type=float, default=12.0, help="seconds to wait for the capacity to come back")
    ap.add_argument("--baseline-build", help="another build's servers, measured the same way")
    ap.add_argument("--baseline-label", default="before")
    ap.add_argument("--record", help="write a docs/results/records/ JSON file")
    args = ap.parse_args()
    if args.flood < 1 or args.limit <= 0:
        ap.error("--flood must be at least 1 and --limit positive")
    load_start = os.getloadavg()[0]
    values = {}
    builds = [("", args.build)] + ([(args.baseline_label, args.baseline_build)] if args.baseline_build else [])
    for label, build in builds:
        for name in args.servers:
            exe = os.path.join(build, "server", f"server_{name}")
            if not os.access(exe, os.X_OK):
                raise SystemExit(f"{exe}: not built (cmake --build {build} --target server_{name})")
            key = name if not label else f"{name}_{label}"
            values[key] = measure(exe, args.flood, args.limit)
            print(key, values[key], flush=True)
    load_end = os.getloadavg()[0]
    rows = []
    for name in args.servers:
        v = values[name]
        row = [name, fmt_ms(v["freed_ms"], args.limit), fmt_ms(v["probe_before_p50_ms"], args.limit),
               fmt_ms(v["probe_first_after_ms"], args.limit), fmt_ms(v["probe_after_p50_ms"], args.limit)]
        if args.baseline_build:
            b = values[f"{name}_{args.baseline_label}"]
            row += [fmt_ms(b["freed_ms"], args.limit), fmt_ms(b["probe_first_after_ms"], args.limit)]
        rows.append(row)
    columns = ["server", "flood's jobs all ended after (ms)", "/sleep?ms=1 before (p50 ms)",
               "first /sleep?ms=1 after (ms)", "/sleep?ms=1 after (p50 ms)"]
    if args.baseline_build:
        columns += [f"{args.baseline_label}: jobs ended after (ms)", f"{args.baseline_label}: first /sleep?ms=1 after (ms)"]
    print("| " + " | ".join(columns) + " |")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    if args.record:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        record = {
            "title": f"A flood of {args.flood} abandoned /sleep?ms={SLEEP_MS} requests: when the capacity comes back",
            "command": "python3 bench/http/abandon.py " + " ".join(sys.argv[1:]),
            "commit": commit,
            "date": datetime.date.today().isoformat(),
            "machine": machine() + ", GCC 12 release build, --threads 2",
            "load_average": f"{min(load_start, load_end):.1f}-{max(load_start, load_end):.1f}",
            "values": values,
            "tables": {"abandoned_sleep": {"columns": columns, "rows": rows}},
            "notes": ("Each server is started on its own; its capacity is freed when /stats shows no job in flight "
                      "and every flood request started. The baseline columns are the same servers built at the "
                      "commit before cancellation, where an abandoned request's job runs to its end."),
        }
        with open(args.record, "w") as f:
            json.dump(record, f, indent=2)
            f.write("\n")
        print("wrote", args.record)


if __name__ == "__main__":
    main()
