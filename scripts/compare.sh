#!/usr/bin/env bash
# Sets up, builds and runs the side-by-side comparison: the README's first command.
#
#   scripts/compare.sh [compare.py options...]   e.g. --workloads fib,submit --reps 5
#
# Builds the release preset, runs every bench_<subject> on every workload (bench/compare.py), then
# the HTTP comparison against nginx if the servers are built (bench/http/, 3 interleaved rounds:
# the p99 target is a median, one run alone flips it). Results, with the
# command that produced each number, go to bench/results/latest/ (results.md, .json, .png).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"

# Debian's python3-matplotlib belongs to /usr/bin/python3; prefer an interpreter that has it.
py=python3
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import matplotlib' >/dev/null 2>&1; then py=$candidate; break; fi
done

out=bench/results/latest
"$py" bench/compare.py --build build --out "$out" "$@"
if [[ -x bench/http/run.py ]] && compgen -G "build/server/server_*" >/dev/null; then
  "$py" bench/http/run.py --build build --out "$out/http" --repeat 3
fi
echo
echo "Comparison written to $out/ (open results.md; plot: results.png)"
