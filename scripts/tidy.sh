#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs clang-tidy (.clang-tidy's checks) over every translation unit of the project and fails on
# any finding. scripts/test.sh calls it after the clang preset's build, whose compile_commands.json
# it reads (clang-tidy parses with Clang, so a Clang build's flags suit it best).
#
#   scripts/tidy.sh [BUILD_DIR]       default build-clang; configure it first (cmake --preset clang)
#
# Checked: the .cpp files under common/, variants/, server/, bench/ and course/, and through them
# the project's headers (HeaderFilterRegex). Left out: generated files in the build folder (CMake's
# unity sources repeat files that are checked anyway) and the Relacy models in common/model/, which
# compile against Relacy's replacement of the standard library that clang-tidy cannot parse.
# Tests and course checks run with two performance checks off (.clang-tidy says why).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-clang}
db=$build/compile_commands.json
[[ -f $db ]] || { echo "tidy.sh: no $db (configure first: cmake --preset clang)" >&2; exit 2; }
command -v run-clang-tidy >/dev/null || { echo "tidy.sh: run-clang-tidy not found (Debian package clang-tidy)" >&2; exit 2; }

mapfile -t all < <(python3 - "$db" "$PWD" <<'PY'
import json, sys
db, root = sys.argv[1], sys.argv[2] + "/"
files = {e["file"] for e in json.load(open(db))}
for f in sorted(files):
    rel = f[len(root):] if f.startswith(root) else None
    if rel and rel.split("/")[0] in ("common", "variants", "server", "bench", "course") \
            and not rel.startswith("common/model/"):
        print(rel)
PY
)
tests=() code=()
for f in "${all[@]}"; do
  if [[ $f == */tests/* || $f == course/*/check.cpp ]]; then tests+=("$f"); else code+=("$f"); fi
done

start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
jobs=$(nproc)
# -quiet: only findings. A file's findings are printed with the command that found them.
# run-clang-tidy exits non-zero when a clang-tidy run failed (a file that does not parse).
rc=0
run-clang-tidy -p "$build" -j "$jobs" -quiet "${code[@]}" >"$log" 2>&1 || rc=$?
run-clang-tidy -p "$build" -j "$jobs" -quiet \
  -checks=-performance-inefficient-vector-operation,-performance-unnecessary-value-param \
  "${tests[@]}" >>"$log" 2>&1 || rc=$?
findings=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u || true)
count=$(grep -c . <<<"$findings" || true)
echo "tidy.sh: ${#all[@]} translation units (${#tests[@]} tests), $count findings, $((SECONDS - start)) s"
if [[ $count -gt 0 ]]; then
  sed "s|^$PWD/||" <<<"$findings"
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  # Failed without a finding in the usual form: show the end of what it printed.
  echo "tidy.sh: run-clang-tidy failed (exit $rc) without a finding; its last lines:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
