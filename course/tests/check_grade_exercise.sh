#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bad-argument paths of scripts/grade-exercise.sh (ctest -R grade_exercise_arguments): each
# exits 2 with a message, before configuring or building anything.
#
#   course/tests/check_grade_exercise.sh SOURCE_TREE
set -uo pipefail
cd "$1" || exit 1
fail() { echo "check_grade_exercise: $*" >&2; exit 1; }
expect() {  # expect REGEX ARGS...: grade-exercise.sh ARGS exits 2 and prints REGEX
  local pattern=$1 out rc
  shift
  out=$(timeout 20 scripts/grade-exercise.sh "$@" 2>&1)
  rc=$?
  [[ $rc -eq 2 ]] || fail "grade-exercise.sh $*: exit $rc, expected 2; output: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "grade-exercise.sh $*: no /$pattern/ in: $out"
  echo "ok: grade-exercise.sh $* -> exit 2: $(head -1 <<<"$out")"
}
known="known exercises: .*02-nested-wait"
expect "usage: "
expect "no exercise 'no-such-exercise'" no-such-exercise
expect "$known" no-such-exercise
expect "no exercise" ../scripts
expect "no exercise" "02-nested-wait; true"
expect "unknown option '--bogus'" 02-nested-wait --bogus
expect "unknown preset 'fast'" 02-nested-wait --preset fast
expect "scripts/new-pool.sh NAME" 01-first-pool
expect "no pool .nope.*scripts/new-pool.sh nope" 01-first-pool nope
[[ ! -d grade/no-such-exercise ]] || fail "a bad argument left grade/no-such-exercise/ behind"
echo "grade-exercise.sh refuses bad arguments with exit 2 and a message"
