#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grades one exercise of the course pack (docs/course/README.md): the student's command.
#
#   scripts/grade-exercise.sh ID [--preset P] [--build-dir DIR] [--out DIR] [--isolated]
#   scripts/grade-exercise.sh 01-first-pool NAME [--build-dir DIR] [--out DIR] [--isolated]
#
# ID is a folder under course/exercises/. Its CMakeLists.txt (pools_add_exercise, cmake/course.cmake)
# names the check program; this script configures the build folder if it is not configured yet,
# builds exercise_ID there, runs it, and prints its requirements (ok / FAIL, with the reason) and
# the verdict, then its score on the exercise's fixed rubric (course/exercises/ID/rubric.json). Before
# building, the student's files pass the static check (course/tools/grade_static.py); the score comes
# from the check's result channel, not from what the program prints (course/tools/grade_run.py). The
# preset is the exercise's: release, or asan / tsan when its pools_add_exercise
# call says SANITIZER address / thread; --preset overrides it (e.g. --preset tsan, to run your
# code under ThreadSanitizer too), --build-dir the folder (default: the preset's, build/ for
# release). The output and grade/ID/report.json (verdict, score, the rubric's tests, failed
# requirements, command, seconds)
# are kept in grade/ID/ (--out: another folder), for an instructor collecting a class's results.
#
# --isolated (scripts/grade-class.sh, Gradescope's run_autograder: a grader's run of someone else's
# code): the build and the check run through course/tools/grade-sandbox.sh, as the user pools-grader in
# private namespaces, everything read-only but the build folder (the check: not even that), no
# network, with limits; not root: said on one line, and graded with the limits only.
#
# An exercise whose work is a pool of its own (its folder has no CMakeLists.txt: 01-first-pool) is
# graded the same way on the pool made by scripts/new-pool.sh NAME: the static check of
# variants/NAME/include/pools/NAME/pool.hpp, then course_01_check_NAME (course/CMakeLists.txt builds
# course/exercises/01-first-pool/check.cpp per pool) scored on 01's rubric, in the release build.
# The pool's report card (conformance under ASan and TSan, bench, HTTP) is scripts/grade.sh NAME.
#
# A build folder that is not configured yet is configured with the preset, plus the words of the
# environment variable GRADE_CONFIGURE_ARGS (scripts/grade-class.sh configures only the variants the
# exercise links: -DPOOLS_VARIANTS=... -DPOOLS_BUILD_BENCH=OFF). POOLS_BUILD_JOBS: build jobs
# (default: nproc).
#
# Before building, scripts/course-needs.sh checks what this exercise needs (no root needed): a
# missing tool or library is named with its Debian package, and the grader stops (exit 1).
#
# Exit 0 only on PASS (every test of the rubric passed); 1 on FAIL (a failed requirement, a file
# the static check refused, a build error, a timeout, a missing package); 2 for a bad argument (an unknown ID: the known ones are listed).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

known() {
  local d
  for d in course/exercises/*/; do
    d=${d%/}
    [[ -f $d/CMakeLists.txt || -f $d/README.md ]] && printf '%s ' "${d##*/}"
  done
}
usage() {
  echo "usage: scripts/grade-exercise.sh ID [--preset P] [--build-dir DIR] [--out DIR] [--isolated]" >&2
  echo "       scripts/grade-exercise.sh 01-first-pool NAME [options]   (the pool made by scripts/new-pool.sh NAME)" >&2
  echo "known exercises: $(known)" >&2
  exit 2
}
bad() { echo "grade-exercise.sh: $1" >&2; echo "known exercises: $(known)" >&2; exit 2; }

[[ $# -ge 1 && $1 != -h && $1 != --help ]] || usage
id=$1
shift
[[ $id =~ ^[0-9a-z][0-9a-z_-]*$ && -d course/exercises/$id ]] || bad "no exercise '$id' (course/exercises/$id/)"
dir=course/exercises/$id

pool=
if [[ ! -f $dir/CMakeLists.txt ]]; then
  # The exercise's work is a variant of its own (file comment).
  [[ $# -ge 1 && $1 != -* ]] ||
    bad "exercise $id grades the pool you made with scripts/new-pool.sh NAME: scripts/grade-exercise.sh $id NAME"
  pool=$1
  shift
  [[ $pool =~ ^[a-z][a-z0-9_]*$ && -f variants/$pool/include/pools/$pool/pool.hpp ]] ||
    bad "no pool '$pool' (variants/$pool/include/pools/$pool/pool.hpp): make it with scripts/new-pool.sh $pool"
fi

preset=
build_dir=
out=
isolated=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) [[ $# -ge 2 ]] || usage; preset=$2; shift 2 ;;
    --build-dir) [[ $# -ge 2 ]] || usage; build_dir=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --isolated) isolated=1; shift ;;
    *) bad "unknown option '$1'" ;;
  esac
done

# The exercise's own settings, read from its pools_add_exercise call (01: release, 240 s).
cmake_text=$( [[ -n $pool ]] && echo "TIMEOUT 240" || tr '\n' ' ' <"$dir/CMakeLists.txt")
sanitizer=$(grep -oE 'SANITIZER[[:space:]]+(address|thread)' <<<"$cmake_text" | awk '{print $2}' | head -1)
timeout_s=$(grep -oE 'TIMEOUT[[:space:]]+[0-9]+' <<<"$cmake_text" | awk '{print $2}' | head -1)
timeout_s=${timeout_s:-120}
if [[ -z $preset ]]; then
  case $sanitizer in
    address) preset=asan ;;
    thread) preset=tsan ;;
    *) preset=release ;;
  esac
fi
case $preset in
  release) default_dir=build ;;
  asan | tsan | clang | debug) default_dir=build-$preset ;;
  *) bad "unknown preset '$preset' (release, debug, clang, asan, tsan)" ;;
esac
build_dir=${build_dir:-$default_dir}
# What ctest sets for the sanitized presets (CMakePresets.json, cmake/pools.cmake).
case $preset in
  asan) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
  tsan) export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/cmake/tsan.supp" ;;
esac

out=${out:-grade/$id}
mkdir -p "$out" || bad "cannot create the output folder '$out'"
started=$SECONDS
target=exercise_$id
exe=$build_dir/course/exercises/$id/$target
if [[ -n $pool ]]; then
  target=course_01_check_$pool
  exe=$build_dir/course/$target
fi

verdict() {  # PASS|FAIL: adds how it was graded to report.json (course/tools/grade_run.py wrote it), exits
  local result=$1
  python3 - "$id" "$preset" "$build_dir" "$((SECONDS - started))" "$out" "$pool" <<'PY'
import json, sys
exercise, preset, build_dir, seconds, out, pool = sys.argv[1:]
report = json.load(open(f"{out}/report.json"))
report.update({"preset": preset, "build_dir": build_dir, "seconds": int(seconds),
               "command": f"scripts/grade-exercise.sh {exercise} --preset {preset} --build-dir {build_dir}"})
if pool:
    report["pool"] = pool
    report["command"] = report["command"].replace(exercise, f"{exercise} {pool}", 1)
json.dump(report, open(f"{out}/report.json", "w"), indent=2)
PY
  echo "$result: exercise $id ($preset build in $build_dir/; output and report.json in $out/)"
  [[ $result == PASS ]] && exit 0
  exit 1
}
zero() {  # REASON: no run (refused, or does not compile): every test of the rubric scores 0
  python3 course/tools/grade_run.py zero "$id" "$out" "$1" | tee -a "$out/output.txt"
  verdict FAIL
}

# What this exercise needs, checked without root: one line per missing thing, with its package.
if [[ -n $pool ]]; then
  scripts/course-needs.sh "$id" --no-http || exit 1  # the card's extras (cloc, wrk) stay the card's
else
  scripts/course-needs.sh "$id" || exit 1
fi

# The static check of the student's files, before anything of theirs is compiled
# (course/tools/grade_static.py: the headers, names and constructs a submission may not use).
if [[ -n $pool ]]; then
  paths=("variants/$pool/include/pools/$pool/pool.hpp")
else
  read -ra files <<<"$(tr '\n' ' ' <"$dir/CMakeLists.txt" |
    grep -oE 'FILES[[:space:]]+[^)]*' | sed -E 's/^FILES[[:space:]]+//; s/[[:space:]][A-Z_]+[[:space:]].*//')"
  paths=("${files[@]/#/$dir/}")
fi
if ! python3 course/tools/grade_static.py "$id" "${paths[@]}" >"$out/static.txt" 2>&1; then
  sed 's/^/  FAIL  /' "$out/static.txt" | tee "$out/output.txt"
  zero "the static check refused the submission: $(head -1 "$out/static.txt")"
fi

echo "[grade-exercise] $id: building $target in $build_dir/ (preset $preset)" >&2
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  # shellcheck disable=SC2086  # GRADE_CONFIGURE_ARGS: words to add (scripts/grade-class.sh's)
  if ! cmake --preset "$preset" -B "$build_dir" ${GRADE_CONFIGURE_ARGS:-} >"$out/build.log" 2>&1; then
    tail -30 "$out/build.log" | tee "$out/output.txt"
    zero "configure failed (cmake --preset $preset)"
  fi
fi
sandbox=()
isolate_run=()
if [[ $isolated -eq 1 ]]; then
  sandbox=(course/tools/grade-sandbox.sh --limits build --ccache --write "$build_dir" --)
  isolate_run=(--isolated)
fi
if ! "${sandbox[@]}" cmake --build "$build_dir" --target "$target" -j "${POOLS_BUILD_JOBS:-$(nproc)}" >"$out/build.log" 2>&1; then
  if grep -q "unknown target '$target'" "$out/build.log"; then
    echo "  FAIL  this configuration does not build $target (configured with -DPOOLS_VARIANTS that leaves out a library it needs?)" |
      tee "$out/output.txt"
    zero "this configuration does not build $target"
  fi
  first=$(grep -m1 -E "error" "$out/build.log" | sed -E 's|^.*/course/exercises/|course/exercises/|' | cut -c1-200)
  { grep -E -B3 -A3 -m8 "error" "$out/build.log" | head -40; echo "  FAIL  $target does not compile: $first (the whole log: $out/build.log)"; } |
    tee "$out/output.txt"
  zero "$target does not compile: $first"
fi

# The check bounds every step itself; the time limit is the last resort for a hang it cannot see.
# course/tools/grade_run.py runs it with the result channel and scores it on the rubric: what the
# program prints is shown (and kept in output.txt); the score comes from the channel only.
python3 course/tools/grade_run.py run "$id" "$exe" "$out" --timeout "$timeout_s" "${isolate_run[@]}"
rc=$?
[[ $rc -eq 0 ]] && verdict PASS
verdict FAIL
