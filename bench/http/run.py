#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/http/run.py — every server_<name> against nginx, with wrk, on loopback.

Starts each built server (and nginx, configured here to return the same plaintext) pinned to one
core, drives it with wrk pinned to another, and reports requests/s, latency and the ratio to nginx
measured in the same run:

  plaintext   GET /plaintext, keep-alive, not pipelined: server on 1 thread (nginx: 1 worker),
              wrk -t1 -c64.
  pipeline    the same, 16 requests pipelined per connection (wrk + pipeline.lua).
  sleep       GET /sleep?ms=15 with 1,000 connections: compared with Little's law's limit,
              connections / 15 ms = 66,667 req/s (nginx answers it with the echo module's
              echo_sleep when that module is installed), and its p99 with nginx's.
  sleep_10k   the same with 10,000 connections (not by default: scripts/compare.sh --full runs
              it). It needs more than 10,000 open files for wrk and the server (the soft limit is
              raised to the hard one; the scenario is skipped, saying so, if that is too low), and
              10,000 connects arrive at once while net.core.somaxconn caps the listen queue
              (4,096 on Debian 12): every run reports the kernel's ListenOverflows/ListenDrops
              counters (/proc/net/netstat, TcpExt) taken before and after it, so a connection
              dropped from a full queue (it retries a second later) shows as a count, not only as
              a p99 of a second.

Only loopback addresses are used. Every process is bounded in time and stopped at the end.
Output: a JSON file and a Markdown table (printed, and written beside the JSON).

  python3 bench/http/run.py --build build                 # every registered variant + nginx
  python3 bench/http/run.py --build build --servers reactor fixture --duration 5
Python 3 standard library, and tqdm for the progress bar when it is installed (bench/progress.py).
"""
from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
from progress import Progress  # noqa: E402  (bench/progress.py, shared with compare.py)
SLEEP_MS = 15
WRK_TIMEOUT_S = 5  # wrk counts a request unanswered after this long as a timeout


@dataclass
class Scenario:
    name: str
    path: str
    connections: int
    pipeline: int = 1
    threads: int = 1  # server threads (nginx: worker processes)
    what: str = ""


SCENARIOS = {
    "plaintext": Scenario("plaintext", "/plaintext", 64, what="keep-alive, not pipelined, wrk -t1 -c64"),
    "pipeline": Scenario("pipeline", "/plaintext", 64, pipeline=16, what="16 deep pipelining, wrk -t1 -c64"),
    "sleep": Scenario("sleep", f"/sleep?ms={SLEEP_MS}", 1000, what=f"/sleep?ms={SLEEP_MS}, wrk -t1 -c1000"),
    "sleep_10k": Scenario("sleep_10k", f"/sleep?ms={SLEEP_MS}", 10_000,
                          what=f"/sleep?ms={SLEEP_MS}, wrk -t1 -c10000"),
}
DEFAULT_SCENARIOS = ["plaintext", "pipeline", "sleep"]  # the quick comparison's: sleep_10k on request
# Open files each of wrk and a server needs: one per connection, and a margin for their own (a
# server started without --root counts one descriptor per connection: server/README.md,
# "Descriptors"). A server may still hold some of the warm-up's connections when the run's
# arrive: it is allowed twice as many, as far as the limit goes (it lowers its cap to fit, saying
# so on stderr; none of these runs needs the margin).
def files_needed(connections: int) -> int:
    return connections + 1_000


def is_sleep(scenario: str) -> bool:
    return scenario.startswith("sleep")


@dataclass
class Result:
    server: str
    scenario: str
    requests_per_s: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    errors: int = 0
    non_2xx: int = 0
    runs: list[float] = field(default_factory=list)  # req/s of each run
    runs_p99_ms: list[float | None] = field(default_factory=list)
    ratio: float | None = None  # to nginx (plaintext, pipeline) or to Little's law (sleep)
    p99_ratio: float | None = None  # p99 / nginx's p99 (sleep scenarios)
    listen_overflows: int = 0  # TcpExt ListenOverflows over this subject's runs (warm-ups included)
    listen_drops: int = 0
    note: str = ""


def log(msg: str) -> None:
    print(f"[bench/http] {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, limit: float) -> bool:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def listen_counters() -> tuple[int, int]:
    """The kernel's TcpExt ListenOverflows and ListenDrops (this network namespace, every socket):
    a connection whose handshake completed while the listen queue was full (the server did not
    accept fast enough), dropped; the client retransmits a second later. (0, 0) where unreadable."""
    try:
        lines = [line.split() for line in Path("/proc/net/netstat").read_text().splitlines()]
    except OSError:
        return 0, 0
    for names, values in zip(lines, lines[1:]):
        if names and names[0] == "TcpExt:" and values and values[0] == "TcpExt:":
            row = dict(zip(names[1:], values[1:]))
            return int(row.get("ListenOverflows", 0)), int(row.get("ListenDrops", 0))
    return 0, 0


def somaxconn() -> int | None:
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return None


def raise_open_files(needed: int) -> tuple[bool, str]:
    """Raises this process's soft RLIMIT_NOFILE to the hard limit (wrk and the servers inherit it).
    False, and why, if even the hard limit is below `needed`."""
    try:
        import resource
    except ImportError:
        return True, ""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        try:  # only a privileged process may raise the hard limit (up to fs.nr_open)
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, needed))
            soft = hard = needed
        except (ValueError, OSError):
            pass
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft != resource.RLIM_INFINITY and soft < needed:
        return False, f"needs {needed:,} open files, the limit (ulimit -n, hard) is {soft:,}"
    return True, ""


def pinned(core: str | None, cmd: list[str]) -> list[str]:
    return (["taskset", "-c", core] if core is not None and shutil.which("taskset") else []) + cmd


def stop(proc: subprocess.Popen, limit: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL after `limit` seconds; returns the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    return proc.returncode


class Pools:
    """A server_<name> from the build."""

    def __init__(self, name: str, exe: Path, core: str | None, tmp: Path):
        self.name, self.exe, self.core, self.tmp = name, exe, core, tmp
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self, threads: int, connections: int = 0) -> None:
        self.err = open(self.tmp / f"{self.name}.stderr", "wb")
        # --root only where open files are plenty: with it a server counts two per connection.
        root = ["--root", str(self.tmp)] if connections <= 1_000 else []
        cmd = pinned(self.core, [str(self.exe), "--port", "0", "--threads", str(threads), *root,
                                 # the warm-up's connections may still be open when the run's arrive
                                 "--max-connections", str(max(20_000, 2 * connections)),
                                 # within stop()'s 10 s: a server that drains longer is killed
                                 "--shutdown-timeout-ms", "3000"])
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err, stdin=subprocess.DEVNULL)
        # The one stdout line ("listening on 127.0.0.1:PORT"), waited for with a bound: a server
        # that neither prints nor exits must not hang the bench.
        end = time.monotonic() + 20
        seen = b""
        while time.monotonic() < end and self.proc.poll() is None:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            m = re.search(rb"listening on 127\.0\.0\.1:(\d+)\n", seen)
            if m:
                self.port = int(m.group(1))
                return
        stop(self.proc)
        raise RuntimeError(f"{self.exe} did not announce a port (stdout: {seen!r}); see {self.err.name}")

    def stop(self) -> None:
        if self.proc:
            code = stop(self.proc)
            if code != 0:
                log(f"warning: server_{self.name} exited with {code} on SIGTERM")
            self.proc = None
        self.err.close()


class Nginx:
    """nginx from the distribution, configured here: same plaintext, 1 worker, loopback only,
    the current user, everything under a temporary prefix."""

    def __init__(self, exe: str, core: str | None, tmp: Path):
        self.name, self.exe, self.core, self.tmp = "nginx", exe, core, tmp / "nginx"
        self.proc: subprocess.Popen | None = None
        self.port = 0
        self.echo_module = Path("/usr/lib/nginx/modules/ngx_http_echo_module.so")

    def config(self, workers: int) -> str:
        t = self.tmp
        user = f"user {getpass.getuser()};\n" if os.geteuid() == 0 else ""
        load = f"load_module {self.echo_module};\n" if self.echo_module.exists() else ""
        sleep = (f'    location = /sleep {{ default_type application/json; echo_sleep {SLEEP_MS / 1000}; '
                 f"echo -n '{{\"slept_ms\":{SLEEP_MS}}}'; }}\n") if load else ""
        temp = "".join(f"  {d}_temp_path {t / d};\n" for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""{load}{user}worker_processes {workers};
daemon off;
pid {t / 'nginx.pid'};
error_log {t / 'error.log'} warn;
events {{ worker_connections 20000; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
{temp}  server {{
    listen 127.0.0.1:{self.port} backlog=4096;
    location = /plaintext {{ default_type text/plain; return 200 "Hello, World!"; }}
{sleep}  }}
}}
"""

    def start(self, threads: int, connections: int = 0) -> None:
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        conf = self.tmp / "nginx.conf"
        conf.write_text(self.config(threads))
        self.err = open(self.tmp / "stderr", "wb")
        self.proc = subprocess.Popen(pinned(self.core, [self.exe, "-p", str(self.tmp), "-c", str(conf)]),
                                     stdout=self.err, stderr=self.err, stdin=subprocess.DEVNULL)
        if not wait_port(self.port, 10):
            stop(self.proc)
            raise RuntimeError(f"nginx did not start; see {self.tmp}")

    def stop(self) -> None:
        if self.proc:
            stop(self.proc)
            self.proc = None
        self.err.close()


LATENCY = re.compile(r"^\s+(50|99)(?:\.0+)?%\s+([\d.]+)(us|ms|s)\s*$", re.M)


def wrk(args, subject, scenario: Scenario, duration: int) -> dict:
    url = f"http://127.0.0.1:{subject.port}"
    cmd = [args.wrk, "-t1", f"-c{scenario.connections}", f"-d{duration}s", "--latency", "--timeout", f"{WRK_TIMEOUT_S}s"]
    if scenario.pipeline > 1:
        cmd += ["-s", str(HERE / "pipeline.lua"), url, "--", str(scenario.pipeline), scenario.path]
    else:
        cmd += [url + scenario.path]
    out = subprocess.run(pinned(args.wrk_core, cmd), capture_output=True, text=True, timeout=duration + 60)
    if out.returncode != 0 or "Requests/sec" not in out.stdout:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stderr or out.stdout}")
    return parse_wrk(out.stdout, pipelined=scenario.pipeline > 1)


def parse_wrk(text: str, pipelined: bool) -> dict:
    """req/s, p50/p99 in ms, socket errors and non-2xx responses from wrk's --latency report.

    Pipelined runs report no latency (None): wrk times a pipelined batch as one request and its
    percentiles then come out as 0 (github.com/wg/wrk/issues/236), so any number would be wrong.
    Nor does a run in which no request completed (wrk prints 0.00us for an empty histogram).
    """
    unit = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    completed = re.search(r"(\d+) requests in", text)
    measured = not pipelined and completed is not None and int(completed.group(1)) > 0
    lat = {p: float(v) * unit[u] for p, v, u in LATENCY.findall(text)} if measured else {}
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),
        "p50": lat.get("50"),
        "p99": lat.get("99"),
        "errors": errors,
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
    }


def measure_once(args, subject, scenario: Scenario) -> dict:
    """One run: start the server, warm it up, one measured wrk run, stop it. The listen-queue
    counters are taken around the warm-up and the run (both open every connection at once)."""
    subject.start(scenario.threads, scenario.connections)
    before = listen_counters()
    try:
        if args.warmup > 0:
            wrk(args, subject, scenario, args.warmup)
        result = wrk(args, subject, scenario, args.duration)
        after = listen_counters()
        result["listen_overflows"], result["listen_drops"] = after[0] - before[0], after[1] - before[1]
        return result
    finally:
        subject.stop()


def middle(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def summarise(name: str, scenario: Scenario, runs: list[dict]) -> Result:
    """Median of the runs, each statistic on its own: the p99 shown is the median of the runs'
    p99s, not the p99 of whichever run had the median req/s."""
    res = Result(name, scenario.name)
    res.runs = [r["rps"] for r in runs]
    res.runs_p99_ms = [r["p99"] for r in runs]
    res.requests_per_s = statistics.median(res.runs)
    res.p50_ms = middle([r["p50"] for r in runs])
    res.p99_ms = middle([r["p99"] for r in runs])
    res.errors = sum(r["errors"] for r in runs)
    res.non_2xx = sum(r["non_2xx"] for r in runs)
    res.listen_overflows = sum(r.get("listen_overflows", 0) for r in runs)
    res.listen_drops = sum(r.get("listen_drops", 0) for r in runs)
    return res


def measure(args, subjects: list, scenario: Scenario, progress: Progress) -> list[Result]:
    """`--repeat` rounds; each round measures every subject once, in an order rotated by one per
    round. A server is not measured back to back: drift of the machine (frequency, a neighbour
    VM) lands on every subject alike, and the ratios to nginx compare runs minutes apart at most."""
    runs: dict[str, list[dict]] = {s.name: [] for s in subjects}
    failed: dict[str, str] = {}
    for round_ in range(args.repeat):
        k = round_ % len(subjects)
        for subject in subjects[k:] + subjects[:k]:
            if subject.name in failed:
                progress.advance()
                continue
            progress.start(f"{scenario.name}: {subject.name} (run {round_ + 1} of {args.repeat})")
            try:
                runs[subject.name].append(measure_once(args, subject, scenario))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                progress.write(f"[bench/http] {scenario.name}: {subject.name} failed: {e}")
                failed[subject.name] = f"failed: {e}"
            progress.advance()
    return [Result(s.name, scenario.name, note=failed[s.name]) if s.name in failed
            else summarise(s.name, scenario, runs[s.name]) for s in subjects]


def find_servers(build: Path, names: list[str] | None) -> dict[str, Path]:
    if names is None:
        listed = build / "pools_variants.txt"
        names = [n for n in listed.read_text().split() if n] if listed.exists() else []
    found = {}
    for name in names:
        exe = build / "server" / f"server_{name}"
        if exe.exists():
            found[name] = exe
        else:
            log(f"skipping {name}: {exe} is not built")
    return found


def driver_source(server: str) -> Path:
    """The driver server_<server> is built from: its own, else the generic one (cmake/pools.cmake)."""
    own = ROOT / "server" / "drivers" / f"{server}.cpp"
    return own if own.exists() else ROOT / "server" / "drivers" / "generic.cpp"


def blocks_in_sleep(server: str) -> bool:
    """True when server_<server> holds a pool thread for the whole of a /sleep: its driver serves
    requests with pools::server::pool_session, which runs each job on a worker with run_blocking
    (server/include/pools/server/pool_session.hpp), and /sleep's job is std::this_thread::sleep_for."""
    return server != "nginx" and "pool_session" in driver_source(server).read_text()


def blocking_sleep_note(servers: list[str], conns: int | None = None) -> str:
    """Why a server whose pool blocks in /sleep cannot serve a sleep scenario of `conns` connections
    (default: the sleep scenario's), from the constants the run uses; "" when none of `servers` blocks."""
    blocking = [s for s in servers if blocks_in_sleep(s)]
    if not blocking:
        return ""
    conns = SCENARIOS["sleep"].connections if conns is None else conns
    drivers = ", ".join(sorted({str(driver_source(s).relative_to(ROOT)) for s in blocking}))
    return (f"{', '.join(blocking)}: cannot serve this workload, by design. The driver ({drivers}) runs "
            f"each request's sleep on a pool worker, which blocks in std::this_thread::sleep_for for the "
            f"whole {SLEEP_MS} ms (pools::server::pool_session, run_blocking). With the one server thread "
            f"of this scenario that is at most 1000 / {SLEEP_MS} = {1000 / SLEEP_MS:.1f} req/s; {conns:,} connections queue for "
            f"{SLEEP_MS * conns / 1000:g} s, longer than wrk waits for an answer (its timeout), so almost "
            "nothing completes. A pool that suspends the request instead of the thread (the coroutine and fiber "
            "timers, the reactor's timers) serves it: docs/server-four-ways.md.")


def markdown(results: list[Result], scenarios: list[Scenario]) -> str:
    lines = []
    for sc in scenarios:
        rows = [r for r in results if r.scenario == sc.name]
        if not rows:
            continue
        sleep = is_sleep(sc.name)
        ratio = "× Little's law limit | p99 × nginx | listen overflows" if sleep else "× nginx"
        lines += [f"### {sc.name}: {sc.what}", "",
                  f"| server | req/s | p50 ms | p99 ms | errors | non-2xx | {ratio} |",
                  "|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if sleep else "")]
        for r in rows:
            fmt = lambda v, d=2: "–" if v is None else f"{v:.{d}f}"
            if sleep and blocks_in_sleep(r.server):
                # Not a measurement of a slow server but a design that cannot serve it: say so.
                measured = f" ({r.requests_per_s:,.0f} req/s measured)" if r.requests_per_s else ""
                lines.append(f"| {r.server} | cannot serve it by design{measured}: its workers block in "
                             "the sleep (below) | – | – | – | – | – | – | – |")
                continue
            if r.note and not r.runs:
                lines.append(f"| {r.server} | {r.note} | – | – | – | – | – |" + (" – | – |" if sleep else ""))
                continue
            extra = f" {fmt(r.p99_ratio)} | {r.listen_overflows} |" if sleep else ""
            lines.append(f"| {r.server} | {r.requests_per_s:,.0f} | {fmt(r.p50_ms, 3)} | {fmt(r.p99_ms, 3)} | {r.errors} | "
                         f"{r.non_2xx} | {fmt(r.ratio)} |{extra}")
        if sc.pipeline > 1:
            lines.append("\nNo latency: wrk times a pipelined batch as one request and reports its "
                         "percentiles as 0 (github.com/wg/wrk/issues/236); req/s counts every response.")
        if sleep:
            limit = sc.connections / (SLEEP_MS / 1000)
            lines.append(f"\nLittle's law limit: {sc.connections} connections / {SLEEP_MS} ms = {limit:,.0f} req/s. "
                         "Listen overflows: the kernel's TcpExt ListenOverflows over the subject's runs (warm-ups "
                         "included): connections dropped because the listen queue was full, each retried by its "
                         "client a second later.")
            note = blocking_sleep_note([r.server for r in rows], sc.connections)
            if note:
                lines.append("\n" + note)
        lines.append("")
    return "\n".join(lines)


def render(json_path: Path, out: Path) -> int:
    """--render: http.md from an http.json (after a change to the report's layout); nothing runs."""
    try:
        run = json.loads(json_path.read_text())
        results = [Result(**r) for r in run["results"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"run.py: --render {json_path}: {e}", file=sys.stderr)
        return 2
    scenarios = [sc for sc in SCENARIOS.values() if any(r.scenario == sc.name for r in results)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "http.md").write_text(markdown(results, scenarios) + "\n")
    log(f"wrote {out / 'http.md'} from {json_path}")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", type=Path, default=ROOT / "build", help="build folder (default: build/)")
    p.add_argument("--servers", nargs="*", help="server names (default: every registered variant)")
    p.add_argument("--scenarios", nargs="*", choices=list(SCENARIOS), default=DEFAULT_SCENARIOS,
                   help=f"default: {' '.join(DEFAULT_SCENARIOS)} (sleep_10k: 10,000 connections, on request)")
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run (1..120)")
    p.add_argument("--warmup", type=int, default=2, help="seconds of discarded warm-up per server (0..30)")
    p.add_argument("--repeat", type=int, default=1, help="rounds; each measures every server once (rotated order); medians (1..9)")
    p.add_argument("--server-core", default="0", help="CPU for the servers and nginx ('' = no pinning)")
    p.add_argument("--wrk-core", default="1", help="CPU for wrk ('' = no pinning)")
    p.add_argument("--no-nginx", action="store_true", help="skip nginx (no ratios then)")
    p.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    p.add_argument("--wrk", default=shutil.which("wrk") or "wrk")
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "results", help="where to write http.json / http.md")
    p.add_argument("--render", type=Path, metavar="HTTP_JSON",
                   help="run nothing: write <out>/http.md again from an http.json this script wrote")
    args = p.parse_args()
    if args.render:
        return render(args.render, args.out)
    if not 1 <= args.duration <= 120 or not 0 <= args.warmup <= 30 or not 1 <= args.repeat <= 9:
        p.error("--duration 1..120, --warmup 0..30, --repeat 1..9")
    args.server_core = args.server_core or None
    args.wrk_core = args.wrk_core or None
    if not shutil.which(args.wrk):
        p.error(f"wrk not found ({args.wrk})")

    servers = find_servers(args.build, args.servers)
    if not servers and args.no_nginx:
        p.error("nothing to measure")
    scenarios = [SCENARIOS[s] for s in args.scenarios]
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="pools_http_bench_") as tmp_name:
        tmp = Path(tmp_name)
        subjects = []
        if not args.no_nginx:
            if not (shutil.which(args.nginx) or Path(args.nginx).exists()):
                p.error(f"nginx not found ({args.nginx}); pass --no-nginx to go without")
            subjects.append(Nginx(args.nginx, args.server_core, tmp))
        subjects += [Pools(n, exe, args.server_core, tmp) for n, exe in servers.items()]
        plan = []
        for sc in scenarios:
            present = [x for x in subjects
                       if not (isinstance(x, Nginx) and is_sleep(sc.name) and not x.echo_module.exists())]
            if len(present) < len(subjects):
                log(f"nginx: no echo module, skipping the {sc.name} scenario for it")
            ok, why = raise_open_files(files_needed(sc.connections))
            if not ok:
                log(f"skipping {sc.name}: it {why}")
                results += [Result(x.name, sc.name, note=f"not run: it {why}") for x in present]
                continue
            if sc.name == "sleep_10k":
                # A server that blocks a worker per sleep cannot serve 1,000 connections (the sleep
                # scenario shows it); 10,000 would only keep it busy for minutes after wrk is gone.
                for x in [x for x in present if blocks_in_sleep(x.name)]:
                    results.append(Result(x.name, sc.name, note="not run: its workers block in the sleep"))
                present = [x for x in present if not blocks_in_sleep(x.name)]
                cap = somaxconn()
                if cap is not None and cap < sc.connections:
                    log(f"{sc.name}: net.core.somaxconn is {cap:,}, below {sc.connections:,} connections: the "
                        "listen queue holds at most that many not yet accepted (see 'listen overflows')")
            plan.append((sc, present))
        progress = Progress(sum(len(present) for _, present in plan) * args.repeat)
        for sc, present in plan:
            results += measure(args, present, sc, progress)
        progress.close()

    for r in results:
        if is_sleep(r.scenario):
            r.ratio = r.requests_per_s / (SCENARIOS[r.scenario].connections / (SLEEP_MS / 1000))
            ref = next((x for x in results if x.server == "nginx" and x.scenario == r.scenario), None)
            if ref and ref.p99_ms and r.p99_ms is not None:
                r.p99_ratio = r.p99_ms / ref.p99_ms
        else:
            ref = next((x for x in results if x.server == "nginx" and x.scenario == r.scenario), None)
            r.ratio = r.requests_per_s / ref.requests_per_s if ref and ref.requests_per_s else None

    table = markdown(results, scenarios)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"duration_s": args.duration, "warmup_s": args.warmup, "repeat": args.repeat,
            "server_core": args.server_core, "wrk_core": args.wrk_core, "cpus": os.cpu_count(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv)}
    (args.out / "http.json").write_text(json.dumps({"meta": meta, "results": [asdict(r) for r in results]}, indent=2))
    (args.out / "http.md").write_text(table + "\n")
    log(f"wrote {args.out / 'http.json'} and {args.out / 'http.md'}")
    return 0 if all(not r.note or r.note.startswith("not run") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
