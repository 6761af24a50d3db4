#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# server/fuzz/run_fuzzer.sh — how ctest runs a libFuzzer target (server/README.md, "Fuzzing").
#
#   run_fuzzer.sh replay FUZZER SEEDS_DIR
#       Runs every file of SEEDS_DIR once (libFuzzer's file mode: nothing is written anywhere);
#       fails if one of them fails.
#   run_fuzzer.sh fuzz FUZZER SEEDS_DIR SECONDS WORK_DIR [DICT]
#       Fuzzes for SECONDS over a fresh copy of SEEDS_DIR in WORK_DIR/corpus (the seeds in the
#       source tree are never written). A failing input is kept in WORK_DIR/artifacts/ (crash-<sha1>,
#       timeout-<sha1>, oom-<sha1>, leak-<sha1>); its path, a hexdump and the command that replays
#       it are printed, and the test fails.
set -euo pipefail

usage() {
  sed -n '3,11p' "$0" >&2
  exit 2
}
[[ $# -ge 3 ]] || usage
mode=$1 fuzzer=$2 seeds=$3
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

shopt -s nullglob
files=("$seeds"/*)
[[ ${#files[@]} -gt 0 ]] || { echo "run_fuzzer.sh: no seed files in $seeds" >&2; exit 1; }

case $mode in
  replay)
    [[ $# -eq 3 ]] || usage
    exec "$fuzzer" "${files[@]}"
    ;;
  fuzz)
    [[ $# -ge 5 && $# -le 6 ]] || usage
    seconds=$4 work=$5 dict=${6:-}
    rm -rf "$work/corpus"
    mkdir -p "$work/corpus" "$work/artifacts"
    cp "${files[@]}" "$work/corpus/"
    before=$(ls -1 "$work/artifacts")
    args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
          -close_fd_mask=2 -artifact_prefix="$work/artifacts/")
    [[ -z $dict ]] || args+=(-dict="$dict")
    echo "run_fuzzer.sh: $fuzzer ${args[*]} $work/corpus"
    set +e
    "$fuzzer" "${args[@]}" "$work/corpus"
    rc=$?
    set -e
    if [[ $rc -ne 0 ]]; then
      echo "run_fuzzer.sh: $(basename "$fuzzer") failed (exit $rc)"
      for artifact in "$work"/artifacts/*; do
        grep -qxF "$(basename "$artifact")" <<<"$before" && continue
        echo "== failing input kept at $artifact ($(wc -c <"$artifact") bytes); hexdump:"
        od -A x -t x1z -v "$artifact" | head -n 256
        echo "== replay it with: $fuzzer $artifact"
      done
    fi
    exit "$rc"
    ;;
  *)
    usage
    ;;
esac
