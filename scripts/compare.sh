#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs the side-by-side comparison: the README's first command.
#
#   scripts/compare.sh                 quick: a first look in a few minutes after the build
#   scripts/compare.sh --full          the complete run the published numbers come from
#   scripts/compare.sh [--full] [compare.py options...]   e.g. --workloads fib,submit --rounds 5
#
# Builds the release preset, runs every bench_<subject> on every workload (bench/compare.py), then
# the HTTP comparison against nginx if the servers are built (bench/http/run.py). Both show live
# progress on a terminal (a bar with the time left; plain lines in a log).
#   quick (default): compare.py --quick (one repetition per run, 3 interleaved rounds for
#                    fork-join, on smaller problems, and the per-task workloads, each with its noise
#                    floor; the half-minute runs of the naive and Boost.Fiber references left
#                    out), HTTP one round of 3-second runs.
#   --full:          compare.py with 3 repetitions and 3 rounds, every reference on every
#                    workload; HTTP 3 interleaved rounds of 10-second runs (the p99 target is a
#                    median, one run alone flips it), and /sleep with 10,000 connections
#                    (sleep_10k: the quick run leaves it out, so its time does not grow).
# Results, with the command that produced each number, go to bench/results/latest/ (results.md,
# .json, .png; http/http.md, .json).
set -euo pipefail
cd "$(dirname "$0")/.."
# The compiler cache's base folder, as in scripts/test.sh (which says why).
if [[ -d ../shared/third_party ]]; then export CCACHE_BASEDIR="$(dirname "$PWD")"; else export CCACHE_BASEDIR="$PWD"; fi
export CCACHE_NOHASHDIR=1

mode=quick
args=()
for a in "$@"; do
  if [[ $a == --full ]]; then mode=full; elif [[ $a == --quick ]]; then mode=quick; else args+=("$a"); fi
done

scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

# Debian's python3-matplotlib and python3-tqdm belong to /usr/bin/python3; prefer an interpreter
# that has matplotlib (tqdm is optional: without it the progress is plain lines).
py=python3
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import matplotlib' >/dev/null 2>&1; then py=$candidate; break; fi
done

out=bench/results/latest
start=$SECONDS
if [[ $mode == quick ]]; then
  echo "== quick comparison: for a first look (scripts/compare.sh --full for the complete run)"
  "$py" bench/compare.py --build build --out "$out" --quick "${args[@]}"
  http_args=(--repeat 1 --duration 3 --warmup 1)
else
  "$py" bench/compare.py --build build --out "$out" "${args[@]}"
  http_args=(--repeat 3 --scenarios plaintext pipeline sleep sleep_10k)
fi
if [[ -x bench/http/run.py ]] && compgen -G "build/server/server_*" >/dev/null; then
  "$py" bench/http/run.py --build build --out "$out/http" "${http_args[@]}"
fi
echo
echo "Comparison ($mode) written to $out/ in $((SECONDS - start)) s (open results.md; plot: results.png)"
