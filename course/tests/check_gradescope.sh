#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves scripts/gradescope.sh (ctest -R gradescope_autograder): bad arguments exit 2; then for each
# EXERCISE given, the zip is made, unzipped into a temporary AUTOGRADER_ROOT (Gradescope's
# /autograder), setup.sh run, and run_autograder run on three submissions:
#   the starting point      -> results.json scores at most 25 % of the points, a failed test says why
#   the reference solution  -> full marks
#   a file that does not compile -> score 0, the compiler's "error" in the output
# and every results.json has Gradescope's documented fields (score; tests with name, score,
# max_score, status, output, visibility).
#
#   course/tests/check_gradescope.sh SOURCE_TREE EXERCISE...
set -uo pipefail
src=$(cd "$1" && pwd)
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_gradescope: $*" >&2; exit 1; }
expect2() {
  local pattern=$1 out
  shift
  out=$("$src/scripts/gradescope.sh" "$@" 2>&1)
  [[ $? -eq 2 ]] || fail "gradescope.sh $*: not exit 2: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "gradescope.sh $*: no /$pattern/ in: $out"
  echo "ok: gradescope.sh $* -> exit 2: $out"
}
expect2 "usage: "
expect2 "no exercise 'nope'.*known exercises" nope "$work/a.zip"
expect2 "does not end in .zip" 02-nested-wait "$work/a.tar"
expect2 "no folder" 02-nested-wait "$work/missing/a.zip"
[[ -d $src/course/solutions ]] || { echo "check_gradescope: the rest skipped: no course/solutions (a hand-out)"; exit 77; }

# The student's file(s) of EXERCISE: (start file, solution file, name in the upload)
for id in "$@"; do
  echo "== $id ($SECONDS s)"
  "$src/scripts/gradescope.sh" "$id" "$work/$id.zip" || fail "$id: gradescope.sh failed"
  ag=$work/ag-$id
  mkdir -p "$ag/source"
  python3 -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(i, sys.argv[2]) or None for i in z.infolist()]
import os
for i in z.infolist(): os.chmod(os.path.join(sys.argv[2], i.filename), (i.external_attr >> 16) & 0o777 or 0o644)" "$work/$id.zip" "$ag/source"
  [[ -x $ag/source/setup.sh && -x $ag/source/run_autograder ]] || fail "$id: setup.sh or run_autograder missing or not executable"
  export AUTOGRADER_ROOT=$ag CCACHE_BASEDIR=$ag/source/tree CCACHE_NOHASHDIR=1
  "$ag/source/setup.sh" >"$work/setup-$id.log" 2>&1 || { tail -20 "$work/setup-$id.log"; fail "$id: setup.sh failed"; }
  if [[ $id == 01-first-pool ]]; then
    start=$work/start-01.hpp
    sed 's/@NAME@/mine/g' "$src/scripts/templates/new-pool/pool.hpp.in" >"$start"
    solution=$work/solution-01.hpp
    sed 's/@NAME@/mine/g' "$src/course/solutions/01-first-pool/pool.hpp.in" >"$solution"
    file=pool.hpp
  else
    file=$(tr '\n' ' ' <"$src/course/exercises/$id/CMakeLists.txt" | grep -oE 'FILES[[:space:]]+[^ ]+' | awk '{print $2}')
    start=$src/course/exercises/$id/$file
    solution=$src/course/solutions/$id/$file
  fi
  broken=$work/broken-$id
  { cat "$solution"; echo "inline int does_not_compile() { return undeclared_name; }"; } >"$broken"
  for kind in start solution broken; do
    rm -rf "$ag/submission" "$ag/results"
    mkdir -p "$ag/submission/folder"
    case $kind in
      start) cp "$start" "$ag/submission/$file" ;;
      solution) cp "$solution" "$ag/submission/folder/$file" ;;  # in a folder: found by name
      broken) cp "$broken" "$ag/submission/$file" ;;
    esac
    "$ag/source/run_autograder" >"$work/run.log" 2>&1 || { tail -20 "$work/run.log"; fail "$id $kind: run_autograder failed"; }
    python3 - "$ag/results/results.json" "$kind" "$id" <<'PY' || fail "$id $kind: results.json is not as expected"
import json, sys
path, kind, exercise = sys.argv[1:]
r = json.load(open(path))
tests = r["tests"]
assert tests, "no tests"
for t in tests:
    missing = {"name", "score", "max_score", "status", "output", "visibility"} - set(t)
    assert not missing, f"a test lacks {missing}: {t}"
    assert t["status"] in ("passed", "failed"), t
total = sum(t["max_score"] for t in tests)
assert r["score"] == sum(t["score"] for t in tests), "score is not the sum of the tests"
failed = [t for t in tests if t["status"] == "failed"]
if kind == "start":
    assert 0 <= r["score"] * 4 <= total and failed, f"the start scored {r['score']} of {total} (at most 25 %)"
    print(f"  start: {r['score']} of {total}; {failed[0]['name'][:110]}")
elif kind == "solution":
    assert r["score"] == total and not failed, f"the solution scored {r['score']} of {total}: {[t['name'] for t in failed]}"
    print(f"  solution: {r['score']} of {total}")
else:
    assert r["score"] == 0 and "error" in tests[0]["output"], f"the broken file scored {r['score']}"
    print(f"  does not compile: 0 of {total}; {[l for l in tests[0]['output'].splitlines() if 'error' in l][0][:110]}")
PY
  done
done
echo "every autograder scores the start at most 25 %, the solution full, a compile error 0"
