#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/http/run.py's reading of wrk's report: units, errors, and no latency for pipelined runs.

The reports below are in wrk 4.1's format (Debian 12): a plain run, a pipelined run with the zero
percentiles wrk prints under pipelining (github.com/wg/wrk/issues/236), and a run in which no
request completed (futures' /sleep with 1,000 connections).
"""
import importlib.util
import sys
from pathlib import Path

from checks import expect, verdict

spec = importlib.util.spec_from_file_location("http_run", Path(__file__).resolve().parents[1] / "http" / "run.py")
run = importlib.util.module_from_spec(spec)
sys.modules["http_run"] = run  # dataclasses look their module up while the module loads
spec.loader.exec_module(run)

PLAIN = """Running 10s test @ http://127.0.0.1:8080/plaintext
  1 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   290.12us  120.40us   5.21ms   91.00%
    Req/Sec   226.69k    10.01k  240.00k    80.00%
  Latency Distribution
     50%  135.00us
     75%  180.00us
     90%  250.00us
     99%    1.31ms
  2266950 requests in 10.00s, 280.00MB read
  Socket errors: connect 0, read 3, write 1, timeout 2
  Non-2xx or 3xx responses: 7
Requests/sec: 226695.00
Transfer/sec:     28.00MB
"""

PIPELINED = """Running 2s test @ http://127.0.0.1:18181
  1 threads and 8 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   169.34us  392.71us   4.28ms   78.00%
    Req/Sec     1.43M   113.99k    1.80M    85.00%
  Latency Distribution
     50%   50.00us
     75%  377.00us
     90%    0.00us
     99%    0.00us
  2827104 requests in 2.00s, 350.50MB read
Requests/sec: 1413389.46
Transfer/sec:    175.23MB
"""

NOTHING_COMPLETED = """Running 10s test @ http://127.0.0.1:8080/sleep?ms=15
  1 threads and 1000 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.00us    0.00us   0.00us    -nan%
    Req/Sec     0.00      0.00     0.00    100.00%
  Latency Distribution
     50%    0.00us
     75%    0.00us
     90%    0.00us
     99%    0.00us
  0 requests in 10.01s, 0.00B read
Requests/sec:      0.00
Transfer/sec:       0.00B
"""



def main():
    plain = run.parse_wrk(PLAIN, pipelined=False)
    expect(plain["rps"] == 226695.0, f"req/s read ({plain['rps']})")
    expect(abs(plain["p50"] - 0.135) < 1e-12, f"p50 135.00us is 0.135 ms ({plain['p50']})")
    expect(abs(plain["p99"] - 1.31) < 1e-12, f"p99 1.31ms is 1.31 ms ({plain['p99']})")
    expect(plain["errors"] == 6, f"socket errors summed: 3 + 1 + 2 ({plain['errors']})")
    expect(plain["non_2xx"] == 7, f"non-2xx read ({plain['non_2xx']})")

    piped = run.parse_wrk(PIPELINED, pipelined=True)
    expect(piped["rps"] == 1413389.46, f"pipelined req/s read ({piped['rps']})")
    expect(piped["p50"] is None and piped["p99"] is None, "pipelined: no latency rather than wrk's zeros")
    expect(piped["errors"] == 0 and piped["non_2xx"] == 0, "no error lines: zero errors")

    none = run.parse_wrk(NOTHING_COMPLETED, pipelined=False)
    expect(none["rps"] == 0.0 and none["p50"] is None and none["p99"] is None,
           "no request completed: no latency rather than wrk's empty-histogram zeros")

    scenario = run.SCENARIOS["pipeline"]
    r = run.Result(server="nginx", scenario="pipeline", requests_per_s=piped["rps"], ratio=1.0)
    md = run.markdown([r], [scenario])
    expect("| nginx | 1,413,389 | – | – |" in md, "the table shows a dash, not 0.000, for the latency")
    expect("wg/wrk/issues/236" in md, "and says why")
    return verdict()


if __name__ == "__main__":
    sys.exit(main())
