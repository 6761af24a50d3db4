#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Soak test of the HTTP servers (not run in CI; its --quick form is: ctest -R soak_quick): each
# server under a mixed load on loopback for a while, then SIGTERM.
#
#   scripts/soak.sh                          every server_<name> of the four variants in build/server/
#   scripts/soak.sh fibers reactor           only these
#   scripts/soak.sh --duration 120 --build build-release futures
#   scripts/soak.sh --quick futures          25 s: everything but the memory verdict (below)
#
# Options: --build DIR (default build), --duration S (600), --warmup S (60), --sample S (5),
# --threads N (2), --quick (--warmup 5 --duration 20 --sample 1, memory not judged), --out DIR
# (default /tmp/pools-soak-<time>: the table, each server's stderr, wrk output, memory samples).
#
# Every server named at once, each under its own load, for --duration seconds after --warmup
# seconds of the same load:
#   wrk  /plaintext                        -t1 -c16, keep-alive
#   wrk  /plaintext, pipelined 16 deep     -t1 -c8, bench/http/pipeline.lua
#   wrk  /sleep?ms=10                      -t1 -c32
#   wrk  /fib?n=18                         -t1 -c4
#   a Python client (standard library)     bad requests, each on a new connection, which must get
#                                          their 4xx/5xx; connections reset (RST) mid-request or
#                                          with a job in flight; and a valid /plaintext every tenth
# Checks, each printed in the table: no valid request failed (wrk's non-2xx/3xx responses and
# socket errors, the Python client's failed /plaintext), every bad request got its status, the
# resident set does not grow (below), no connection is left open once the load has stopped
# (/stats, within 10 s: only the /stats request's own), and the server exited 0 within 15 s of
# SIGTERM. Exit status 0 if every check passed, 1 if not, 2 on bad usage.
#
# Memory: RssAnon (the resident anonymous memory: heap, stacks, arenas) is sampled every --sample
# seconds through the measured load, with VmRSS beside it, and judged by the slope of a
# least-squares line through the samples of its second half: it must be below 64 KiB/min. Why
# RssAnon and not VmRSS: most of these servers' VmRSS (some 4 of 5-9 MiB) is file pages of the
# executable and the shared libraries, which the kernel drops under memory pressure and faults back
# in as they are touched, so VmRSS falls and climbs with what else runs on the machine (sampled on a
# shared VM: 1 MiB down in 10 s, then a steady climb back over minutes). Why a slope over the second
# half, not start against end: the heap grows in steps, each time the random load sets a new peak of
# concurrency (connection buffers, queued tasks, coroutine frames, fiber stacks, a malloc arena), and
# is flat between them; steps come ever more rarely, and one comes with the start of the measured
# load, when wrk restarts. Start against end counts any step as growth; a slope over the second half
# of a long run sees growth that goes on, and dilutes a step: one step of S KiB moves it by at most
# 1.5 S per half-length, 0.3 S per minute with the default 10 minutes. Why 64 KiB/min: it lets one
# late step of ~200 KiB pass, and the load makes tens of millions of requests (most of them
# pipelined) and some 8,000 connections a minute, so a leak of any object per request, or of 8 bytes
# per connection, is above it. --quick is too short for this (its second half is still warm-up): it
# prints the slope but does not judge it.
# Everything runs on 127.0.0.1 and is bounded in time (each wrk by its duration plus a margin, the
# server's start and stop by 20 s and 15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "soak.sh: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "soak.sh: python3 is not installed" >&2; exit 2; }
exec python3 - "$@" <<'PYTHON'
import argparse, concurrent.futures, datetime, os, re, signal, socket, struct, subprocess, sys, threading, time

VARIANTS = ["coroutines", "fibers", "futures", "reactor"]

ap = argparse.ArgumentParser(prog="scripts/soak.sh", description="Soak test of the HTTP servers.")
ap.add_argument("servers", nargs="*", help=f"server names (default: {' '.join(VARIANTS)} found in BUILD/server)")
ap.add_argument("--build", default="build")
ap.add_argument("--duration", type=int, default=600, help="seconds of measured load per server")
ap.add_argument("--warmup", type=int, default=60, help="seconds of load before the measured load")
ap.add_argument("--sample", type=float, default=5.0, help="seconds between memory samples")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--quick", action="store_true", help="--warmup 5 --duration 20 --sample 1; memory not judged")
ap.add_argument("--out", default=None)
args = ap.parse_args()
if args.quick:
    args.warmup, args.duration, args.sample = 5, 20, 1.0
if args.duration < 5 or args.duration > 3600 or args.warmup < 1 or args.warmup > 600:
    ap.error("--duration must be 5..3600 and --warmup 1..600 seconds")
if not 0.2 <= args.sample <= args.duration / 4:
    ap.error("--sample must be 0.2 s .. a quarter of --duration")
SLOPE_LIMIT = 64.0  # KiB per minute of RssAnon, over the second half (the header says why)

def server_path(name):
    return os.path.join(args.build, "server", f"server_{name}")

names = args.servers or [n for n in VARIANTS if os.access(server_path(n), os.X_OK)]
missing = [n for n in names if not os.access(server_path(n), os.X_OK)]
if not names or missing:
    print(f"soak.sh: no executable {', '.join(server_path(n) for n in (missing or VARIANTS))} "
          f"(cmake --build {args.build} --target server_<name>)", file=sys.stderr)
    sys.exit(2)
out = args.out or time.strftime("/tmp/pools-soak-%Y%m%d-%H%M%S")
os.makedirs(out, exist_ok=True)

def git(*a):
    try:
        return subprocess.run(["git", *a], capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return "?"

commit = git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else "")

# --- the load -------------------------------------------------------------------------------------

WRK_LOADS = [  # (label, wrk arguments after -d, path)
    ("plaintext", ["-t1", "-c16"], "/plaintext"),
    ("pipeline", ["-t1", "-c8", "-s", "bench/http/pipeline.lua"], "/"),
    ("sleep", ["-t1", "-c32"], "/sleep?ms=10"),
    ("fib", ["-t1", "-c4"], "/fib?n=18"),
]

def wrk(label, extra, path, port, seconds, log):
    cmd = ["wrk", *extra, f"-d{seconds}s", "--timeout", "5s", f"http://127.0.0.1:{port}{path}"]
    if label == "pipeline":
        cmd += ["--", "16", "/plaintext"]
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=seconds + 30)
        text = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        text = f"wrk timed out: {e}"
    with open(log, "a") as f:
        f.write(" ".join(cmd) + "\n" + text + "\n")
    m = re.search(r"(\d+) requests in", text)
    requests = int(m.group(1)) if m else 0
    failed = 0 if m else 1  # no summary: count the run as failed
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    failed += int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    failed += sum(int(x) for x in m.groups()) if m else 0
    return requests, failed

def bad_requests():
    host = "Host: 127.0.0.1\r\n"
    return [  # (bytes, the status it must get)
        (b"GARBAGE\r\n\r\n", 400),
        (f"POST /echo HTTP/1.1\r\n{host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode(), 400),
        (b"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        (f"POST /echo HTTP/1.1\r\n{host}Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd".encode(), 400),
        (b"GET /plaintext HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
        (f"GET /plaintext HTTP/1.1\r\n{host}X-A : b\r\n\r\n".encode(), 400),
        (f"GET /plaintext HTTP/1.1\r\n{host}X-Big: {'b' * 9000}\r\n\r\n".encode(), 431),
        (f"GET /plaintext?{'u' * 9000} HTTP/1.1\r\n{host}\r\n".encode(), 414),
        (f"BREW /pot HTTP/1.1\r\n{host}\r\n".encode(), 501),
        (f"GET /plaintext HTTP/2.0\r\n{host}\r\n".encode(), 505),
        (f"GET /plaintext HTTP/1.1\r\n{host}Expect: pony\r\n\r\n".encode(), 417),
        (f"POST /echo HTTP/1.1\r\n{host}Content-Length: 50000000\r\n\r\n".encode(), 413),
        (f"GET /static/../../etc/passwd HTTP/1.1\r\n{host}\r\n".encode(), 404),
        (f"GET /fib?n=99 HTTP/1.1\r\n{host}\r\n".encode(), 400),
        (b"GET /plaintext HTTP/1.1\nHost: x\n\n", 400),
    ]

def status_of(port, data, timeout=5.0):
    """Sends data on a new connection; returns the status of the first response (0 if none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        buf = b""
        while b"\r\n" not in buf and len(buf) < 4096:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", buf)
    return int(m.group(1)) if m else 0

def reset(port, data):
    """Connects, sends data, and closes with RST (SO_LINGER 0)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5.0)
    try:
        s.sendall(data)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    finally:
        s.close()

def hostile_client(port, seconds, result):
    bad = bad_requests()
    resets = [b"GET /plaintext HTTP/1.1\r\nHo", b"GET /sleep?ms=50 HTTP/1.1\r\nHost: x\r\n\r\n",
              b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc"]
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        try:
            data, want = bad[i % len(bad)]
            got = status_of(port, data)
            result["bad"] += 1
            if got != want:
                result["bad_wrong"] += 1
                result.setdefault("wrong_examples", []).append(f"{data[:40]!r}: {got}, wanted {want}")
            reset(port, resets[i % len(resets)])
            result["resets"] += 1
        except OSError as e:
            result["bad_wrong"] += 1
            result.setdefault("wrong_examples", []).append(f"{e!r}")
        if i % 10 == 0:
            result["plaintext"] += 1
            try:
                if status_of(port, b"GET /plaintext HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") != 200:
                    result["plaintext_failed"] += 1
            except OSError:
                result["plaintext_failed"] += 1
        time.sleep(0.01)  # ~50 connections a second: enough variety, no ephemeral-port exhaustion

def load(port, seconds, log):
    """Runs every load at once for `seconds`; returns the totals."""
    results = {}
    client = {"bad": 0, "bad_wrong": 0, "resets": 0, "plaintext": 0, "plaintext_failed": 0}
    threads = [threading.Thread(target=lambda l=l: results.__setitem__(l[0], wrk(*l, port, seconds, log)))
               for l in WRK_LOADS]
    threads.append(threading.Thread(target=hostile_client, args=(port, seconds, client)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 60)
    valid = sum(r[0] for r in results.values()) + client["plaintext"]
    failed = sum(r[1] for r in results.values()) + client["plaintext_failed"] + (len(WRK_LOADS) - len(results))
    return {**client, "valid": valid, "failed": failed}

# --- one server -----------------------------------------------------------------------------------

def open_connections(port):
    """The server's open connections once the load is over (its /stats), waiting up to 10 s for
    the sessions of the last clients to end; 1 is the /stats request's own connection."""
    open_now = -1
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(b"GET /stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                buf = b""
                while chunk := s.recv(65536):
                    buf += chunk
            open_now = int(re.search(rb'"open":(\d+)', buf).group(1))
        except (OSError, AttributeError):
            open_now = -1
        if open_now == 1:
            break
        time.sleep(0.2)
    return open_now

def vm(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return -1

def rss_samples(pid, seconds, every):
    """(seconds since the start, RssAnon KiB, VmRSS KiB) every `every` seconds for `seconds`."""
    samples, start = [], time.monotonic()
    while True:
        t = time.monotonic() - start
        if t > seconds:
            break
        try:
            samples.append((t, vm(pid, "RssAnon"), vm(pid, "VmRSS")))
        except OSError:
            break
        time.sleep(max(0.0, every - (time.monotonic() - start - t)))
    return samples

def slope_per_minute(samples):
    """Least-squares slope of RssAnon over the second half of the samples, in KiB per minute."""
    half = [x for x in samples if x[0] >= samples[-1][0] / 2]
    if len(half) < 3:
        return float("nan")
    n = len(half)
    mt = sum(x[0] for x in half) / n
    mr = sum(x[1] for x in half) / n
    return 60 * sum((x[0] - mt) * (x[1] - mr) for x in half) / sum((x[0] - mt) ** 2 for x in half)

def soak(name):
    log = os.path.join(out, f"{name}.wrk.log")
    err = open(os.path.join(out, f"{name}.stderr"), "w")
    p = subprocess.Popen([server_path(name), "--port", "0", "--threads", str(args.threads),
                          "--shutdown-timeout-ms", "5000"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, text=True)
    port = None
    deadline = time.monotonic() + 20
    line = ""
    while time.monotonic() < deadline and p.poll() is None:
        line = p.stdout.readline()  # the first line is "listening on 127.0.0.1:PORT"
        m = re.match(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        p.kill()
        p.wait(10)
        return {"server": name, "error": f"did not start: {line!r}"}
    print(f"[{name}] port {port}: warm-up {args.warmup} s", flush=True)
    warm = load(port, args.warmup, log)
    rss_start, anon_start = vm(p.pid, "VmRSS"), vm(p.pid, "RssAnon")
    print(f"[{name}] load {args.duration} s (RssAnon {anon_start} KiB, VmRSS {rss_start} KiB, sampled every "
          f"{args.sample:g} s)", flush=True)
    sampled = {}
    sampler = threading.Thread(target=lambda: sampled.__setitem__("s", rss_samples(p.pid, args.duration, args.sample)))
    sampler.start()
    main = load(port, args.duration, log)
    sampler.join(60)
    rss_end, anon_end = vm(p.pid, "VmRSS"), vm(p.pid, "RssAnon")
    samples = sampled.get("s", [])
    with open(os.path.join(out, f"{name}.rss.csv"), "w") as f:
        f.write("seconds,rssanon_kib,vmrss_kib\n" + "".join(f"{t:.1f},{a},{r}\n" for t, a, r in samples))
    hwm = vm(p.pid, "VmHWM")
    still_open = open_connections(port)
    p.send_signal(signal.SIGTERM)
    try:
        code = p.wait(15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(10)
        code = "killed"
    err.close()
    r = {"server": name, "rss_start": rss_start, "rss_end": rss_end, "anon_start": anon_start,
         "anon_end": anon_end, "hwm": hwm, "exit": code,
         "open": still_open - 1 if still_open > 0 else "?"}
    for k in ("valid", "failed", "bad", "bad_wrong", "resets"):
        r[k] = warm[k] + main[k]
    r["examples"] = (warm.get("wrong_examples", []) + main.get("wrong_examples", []))[:5]
    r["slope"] = slope_per_minute(samples) if samples else float("nan")
    r["rss_ok"] = args.quick or r["slope"] < SLOPE_LIMIT  # NaN (too few samples) fails
    r["ok"] = (r["failed"] == 0 and r["bad_wrong"] == 0 and r["rss_ok"] and r["open"] == 0 and code == 0)
    return r

print(f"soak: {', '.join(names)}; {args.warmup} s warm-up + {args.duration} s, all at once, --threads {args.threads}; "
      f"commit {commit}; output in {out}", flush=True)
# Every server at once, each with its own load (as four soaks started side by side would run):
# one thread per server, the rows in the order named.
with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as ex:
    rows = list(ex.map(soak, names))

header = ("| server | valid requests | failed | bad requests (wrong status) | resets | RssAnon start → end KiB "
          "| RssAnon slope, 2nd half | VmRSS start → end KiB | VmHWM KiB | left open | exit on SIGTERM | verdict |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
lines = [f"soak.sh {'--quick ' if args.quick else ''}--duration {args.duration} --warmup {args.warmup} "
         f"--sample {args.sample:g} --threads {args.threads} "
         f"{' '.join(names)}: commit {commit}, {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}, "
         f"{os.cpu_count()} CPUs", "", header]
for r in rows:
    if "error" in r:
        lines.append(f"| {r['server']} | {r['error']} | | | | | | | | | | FAIL |")
        continue
    lines.append(f"| {r['server']} | {r['valid']:,} | {r['failed']} | {r['bad']:,} ({r['bad_wrong']}) | {r['resets']:,} "
                 f"| {r['anon_start']:,} → {r['anon_end']:,} "
                 f"| {r['slope']:+.1f} KiB/min{' (not judged)' if args.quick else ''} "
                 f"| {r['rss_start']:,} → {r['rss_end']:,} | {r['hwm']:,} | {r['open']} | {r['exit']} "
                 f"| {'ok' if r['ok'] else 'FAIL'} |")
    for e in r["examples"]:
        lines.append(f"  {r['server']}: {e}")
lines.append("")
lines.append(f"Memory verdict: least-squares slope of RssAnon over the second half of the load, "
             f"below {SLOPE_LIMIT:g} KiB/min" + (" (--quick: not judged)" if args.quick else ""))
table = "\n".join(lines)
print("\n" + table)
with open(os.path.join(out, "soak.md"), "w") as f:
    f.write(table + "\n")
sys.exit(0 if all(r.get("ok") for r in rows) else 1)
PYTHON
