#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Draws what each pool's scheduler does: docs/traces/<variant>.png, one picture per variant with
# three timelines (tuned pool, textbook pool, the variant's HTTP server under a short load).
#
#   scripts/trace-pictures.sh [BUILD_DIR=build-trace] [OUT_DIR=docs/traces]
#
# It configures BUILD_DIR with -DPOOLS_TRACE=ON (the release preset otherwise), builds the
# benches and servers, and for each variant runs
#   bench_<v> --workload fib --n 16 --threads 2 --trace ...   (futures: submit of 300 tasks: its
#                                                              pool does not run fork-join)
#   the same with POOLS_BENCH_POOL=textbook
#   server_<v> --threads 2 --trace ... under 120 requests from 4 clients (tests/trace-run.py)
# checks each file (tests/check-trace.py) and draws them (scripts/trace-picture.py). The raw
# traces stay in BUILD_DIR/traces/ for Perfetto (https://ui.perfetto.dev). The runs are a few
# milliseconds each, so every picture is one sample of a scheduler's behaviour, not an average.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-trace}
out=${2:-docs/traces}
python=/usr/bin/python3  # Debian's, which has python3-matplotlib (scripts/bootstrap.sh)
[[ -x $python ]] || python=python3
"$python" -c 'import matplotlib' 2>/dev/null ||
  { echo "trace-pictures: matplotlib is missing (Debian: python3-matplotlib; scripts/bootstrap.sh)" >&2; exit 2; }
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake --preset release -B "$build" -DPOOLS_TRACE=ON >/dev/null
mapfile -t variants < <(ls variants)
targets=()
for v in "${variants[@]}"; do targets+=("bench_$v" "server_$v"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
mkdir -p "$build/traces" "$out"
for v in "${variants[@]}"; do
  work=(--workload fib --n 16)
  label="fib(16)"
  if [[ $v == futures ]]; then work=(--workload submit --n 300); label="300 tasks submitted from outside"; fi
  t="$build/traces/$v"
  "$python" tests/trace-run.py bench "$build/variants/$v/bench_$v" "$t-tuned.json" "${work[@]}" --workers 2 --balanced >"$t-tuned.txt"
  "$python" tests/trace-run.py bench "$build/variants/$v/bench_$v" "$t-textbook.json" --textbook "${work[@]}" \
    --workers 2 --no-steals --balanced >"$t-textbook.txt"
  "$python" tests/trace-run.py server "$build/server/server_$v" "$t-server.json" --requests 120 --workers 2 \
    --expect-requests --balanced >"$t-server.txt"
  "$python" scripts/trace-picture.py "$out/$v.png" \
    "$v, tuned pool: $label" "$t-tuned.json" \
    "$v, textbook pool: $label" "$t-textbook.json" \
    "server_$v: 120 requests (/plaintext, /fib?n=20, /sleep?ms=2, /busy?ms=1) from 4 clients" "$t-server.json" \
    --caption "scripts/trace-pictures.sh at $(git rev-parse --short HEAD), $(date -u +%F), 2 worker threads"
  for kind in tuned textbook server; do
    echo "== $v $kind"
    sed -n '/^trace: /,/^all /p' "$t-$kind.txt"
  done
done
echo "trace-pictures: pictures in $out/, traces in $build/traces/"
