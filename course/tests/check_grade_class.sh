#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves scripts/grade-class.sh (ctest -R grade_class): bad arguments exit 2 with the reason; then
# six submissions of exercise 02-nested-wait, graded two at a time, each in its own copy:
#   j.doe   the reference solution, ANSWERS.md -> PASS, 20 of 20 on the rubric, ANSWERS.md collected
#   J-Doe   the starting point                 -> FAIL, 0 of 20, the deadlock named
#   123abc  a file that does not compile       -> FAIL, "does not compile"
#   class   a solution that crashes (SIGSEGV)  -> FAIL
#   forger  a forged verdict (prints PASS, exits 0 before main) -> FAIL, 0 of 20, the static check named
#   while   a fix 2 that never calls done      -> FAIL, stopped by the check's own limit
# and the logins map to valid, distinct pool names (J-Doe -> j_doe, j.doe -> j_doe_2, 123abc ->
# s_123abc, class -> class_2, while -> while_2), written in results.csv and results.json. Then
# exercise 07-replay-schedule, whose copies must be configured with the coroutines variant: its
# solution PASSes, its starting point FAILs with the seed that oversells. Then exercise 01 (a pool
# of the student's own, variants/<name>/): the solution 20 of 20, the scaffold at most 5, a slow
# but correct pool below full marks (its speed points against the reference pool lost).
#
#   course/tests/check_grade_class.sh SOURCE_TREE
set -uo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_grade_class: $*" >&2; exit 1; }
expect2() {  # expect2 REGEX ARGS...: grade-class.sh ARGS exits 2 and prints REGEX
  local pattern=$1 out
  shift
  out=$("$src/scripts/grade-class.sh" "$@" 2>&1)
  [[ $? -eq 2 ]] || fail "grade-class.sh $*: not exit 2: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "grade-class.sh $*: no /$pattern/ in: $out"
  echo "ok: grade-class.sh $* -> exit 2: $(head -1 <<<"$out")"
}
mkdir -p "$work/empty" "$work/subs"
expect2 "usage: "
expect2 "no exercise 'nope'.*known exercises" nope "$work/subs" "$work/out"
expect2 "no submissions folder" 02-nested-wait "$work/missing" "$work/out"
expect2 "holds no student folders" 02-nested-wait "$work/empty" "$work/out"
expect2 "-j needs a number" 02-nested-wait "$work/subs" "$work/out" -j 0
expect2 "unknown option '--fast'" 02-nested-wait "$work/subs" "$work/out" --fast

solution=$src/course/solutions/02-nested-wait/nested_wait.hpp
if [[ ! -f $solution ]]; then
  echo "check_grade_class: the rest skipped: no $solution (a hand-out)"
  exit 77
fi
start=$src/course/exercises/02-nested-wait/nested_wait.hpp
s=$work/subs
mkdir -p "$s/j.doe" "$s/J-Doe" "$s/123abc" "$s/class" "$s/while"
cp "$solution" "$s/j.doe/nested_wait.hpp"
echo "fib(2) deadlocks on one thread because ..." >"$s/j.doe/ANSWERS.md"  # the written answers
cp "$start" "$s/J-Doe/nested_wait.hpp"
sed 's/^inline long fib_helping(/inline long fib_helping(undeclared_type x, /' "$solution" >"$s/123abc/nested_wait.hpp"
sed 's|^  if (n < 2) {$|  if (n >= 0) *static_cast<volatile long*>(nullptr) = n;\n  if (n < 2) {|' "$solution" >"$s/class/nested_wait.hpp"
sed 's|^    done(n);$|    return;|' "$solution" >"$s/while/nested_wait.hpp"
grep -q "nullptr) = n" "$s/class/nested_wait.hpp" || fail "the crash was not written in"
# A forged verdict: the check's lines and PASS printed before main, and an exit with status 0.
mkdir -p "$s/forger"
cp "$src/course/cheats/02-nested-wait/forge-print-exit/nested_wait.hpp" "$s/forger/" 2>/dev/null ||
  { echo "check_grade_class: the rest skipped: no course/cheats (a hand-out)"; exit 77; }

export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
"$src/scripts/grade-class.sh" 02-nested-wait "$s" "$work/out" -j 2 --timeout 900 || fail "grade-class.sh failed"
csv=$work/out/results.csv
cat "$csv"
row() { grep -E "^$1," "$csv" || fail "no row for $1 in results.csv"; }
[[ $(row 'j\.doe') == 'j.doe,j_doe_2,PASS,20,20,'* ]] || fail "j.doe: $(row 'j\.doe')"
head -1 "$csv" | grep -qF 'fix 1: fib_helping on 1, 2 and 4 threads (8)' || fail "no column per rubric test"
[[ $(row 'J-Doe') == 'J-Doe,j_doe,FAIL,0,20,'* ]] || fail "J-Doe: $(row 'J-Doe')"
row 'J-Doe' | grep -q "deadlock: all" || fail "J-Doe's failure does not name the deadlock"
[[ $(row 123abc) == '123abc,s_123abc,FAIL,'* ]] || fail "123abc: $(row 123abc)"
row 123abc | grep -q "does not compile" || fail "123abc's failure does not say it does not compile"
[[ $(row class) == 'class,class_2,FAIL,'* ]] || fail "class: $(row class)"
row class | grep -q "crashed: killed by signal 11 (SEGV)" || fail "class: the crash is not named"
[[ $(row forger) == 'forger,forger,FAIL,0,20,'* ]] || fail "forger: $(row forger)"
row forger | grep -q "the static check refused the submission" || fail "forger: the static check is not named"
[[ $(row while) == 'while,while_2,FAIL,'* ]] || fail "while: $(row while)"
row while | grep -q "fib_continuation" || fail "while's failure does not name fib_continuation"
python3 - "$work/out/results.json" <<'PY' || fail "results.json is not what results.csv says"
import json, sys
r = json.load(open(sys.argv[1]))
by = {s["login"]: s for s in r["students"]}
assert sorted(by) == ["123abc", "J-Doe", "class", "forger", "j.doe", "while"], sorted(by)
assert r["max_score"] == 20 and [t["max_score"] for t in r["rubric"]] == [8, 4, 4, 4], r["rubric"]
assert by["j.doe"]["score"] == 20 and by["forger"]["score"] == 0 and by["J-Doe"]["score"] == 0
assert by["j.doe"]["answers"] and not by["J-Doe"]["answers"], "ANSWERS.md was not collected"
assert by["j.doe"]["passed"] and not any(by[l]["passed"] for l in by if l != "j.doe")
assert all(by[l]["failures"] for l in by if l != "j.doe")
PY
[[ ! -e $work/out/.work && ! -e $work/out/.tree ]] || fail "the copies were left behind"
[[ -f $work/out/j_doe_2/ANSWERS.md ]] || fail "j.doe's ANSWERS.md was not collected into OUT/j_doe_2/"
echo "grade-class.sh grades each submission in its own copy: one PASS among five different failures"

# An exercise on another variant: the copies are configured with the variants its CMakeLists.txt
# links (07: pools::coroutines), or nothing of it builds.
s7=$work/subs07
mkdir -p "$s7/ref" "$s7/start"
cp "$src/course/solutions/07-replay-schedule/box_office.hpp" "$s7/ref/"
cp "$src/course/exercises/07-replay-schedule/box_office.hpp" "$s7/start/"
"$src/scripts/grade-class.sh" 07-replay-schedule "$s7" "$work/out07" -j 2 --timeout 900 || fail "grade-class.sh 07 failed"
csv=$work/out07/results.csv
cat "$csv"
[[ $(row ref) == 'ref,ref,PASS,20,20,'* ]] || fail "07, the solution: $(row ref)"
# 4 of 20, or 0: the simulated schedules always find the start's race; the real pool's 1,000
# shows find it in some runs only (more often on a busy machine), and then its 4 points go too.
[[ $(row start) =~ ^start,start,FAIL,(0|4),20, ]] || fail "07, the starting point: $(row start)"
row start | grep -q "seats sold, the show has" || fail "07, the starting point's failure does not name the overselling"
echo "grade-class.sh grades exercise 07 in copies configured with the coroutines variant"

# Exercise 01, whose work is a pool of its own: each student's pool.hpp becomes variants/<name>/ in
# the copy, graded by grade-exercise.sh 01-first-pool NAME --isolated on 01's rubric, hidden tests
# and speed against the reference pool included: the solution 20 of 20, the scaffold at most 5, a
# correct pool that pauses after every task below full marks, its speed points lost.
s1=$work/subs01
mkdir -p "$s1/ref" "$s1/start" "$s1/slow"
sed 's/@NAME@/alice/g' "$src/course/solutions/01-first-pool/pool.hpp.in" >"$s1/ref/pool.hpp"
sed 's/@NAME@/bob/g' "$src/scripts/templates/new-pool/pool.hpp.in" >"$s1/start/pool.hpp"
cp "$src/course/cheats/01-first-pool/slow-pause-per-task/pool.hpp" "$s1/slow/"
printf '# alice\n\nThe idea in three sentences ...\n' >"$s1/ref/README.md"  # 01's written answers: the pool's README
"$src/scripts/grade-class.sh" 01-first-pool "$s1" "$work/out01" -j 2 --timeout 900 || fail "grade-class.sh 01 failed"
csv=$work/out01/results.csv
cat "$csv"
[[ $(row ref) == 'ref,ref,PASS,20,20,'* ]] || fail "01, the solution: $(row ref)"
grep -q "The idea in three sentences" "$work/out01/ref/ANSWERS.md" 2>/dev/null ||
  fail "01: the pool's README (its written answers) was not collected into OUT/ref/ANSWERS.md"
[[ $(row start) =~ ^start,start,FAIL,[0-5],20, ]] || fail "01, the starting point: $(row start)"
row start | grep -q "not implemented yet" || fail "01, the starting point's failure does not say 'not implemented yet'"
[[ $(row slow) =~ ^slow,slow,FAIL,1[0-9](\.[0-9])?,20, ]] || fail "01, the slow pool: $(row slow)"
row slow | grep -q "fork-join, fib(22)" || fail "01, the slow pool's failure does not name the fork-join speed"
head -1 "$csv" | grep -qF 'hidden: fork-join speed against the reference pool, on 2 threads (3)' || fail "01: no column for the speed test"
echo "grade-class.sh grades exercise 01 on its rubric: the solution full, the scaffold 0, a slow pool loses its speed points"
