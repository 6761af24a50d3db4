#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves the students' copy (ctest -R handout_tree): scripts/make-handout.sh refuses bad arguments
# (exit 2); the copy it makes holds no instructor material and no history; it configures and
# builds (release, warnings as errors); and every exercise's starting point FAILs its grader with
# the exercise's own reason — 02..07 through scripts/grade-exercise.sh (EXPECT_FAILURE of each
# exercise's CMakeLists.txt; 06 in the copy's asan build), 01 through tests/check_new_pool.sh
# (the scaffold fails saying "not implemented yet"; with no solution to try it exits 77).
#
#   course/tests/check_handout.sh SOURCE_TREE      (KEEP=1: keep the copy in /tmp to look at)
set -uo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -z ${KEEP:-} ]] || trap - EXIT
fail() { echo "check_handout: $*" >&2; exit 1; }
step() { echo "== $* ($SECONDS s)"; }

step "bad arguments: exit 2"
for args in "" "$src/course" "$work/x $work/y"; do
  mkdir -p "$work/x" && touch "$work/x/file"
  # shellcheck disable=SC2086  # the words of $args are the arguments
  out=$("$src/scripts/make-handout.sh" $args 2>&1)
  [[ $? -eq 2 ]] || fail "make-handout.sh $args: not exit 2: $out"
  echo "   make-handout.sh $args -> $out" | head -1
done
out=$("$src/scripts/make-handout.sh" "$work/x" 2>&1)
[[ $? -eq 2 && $out == *"not empty"* ]] || fail "a non-empty OUTDIR was not refused: $out"

step "make the hand-out"
copy=$work/handout
"$src/scripts/make-handout.sh" "$copy" || fail "make-handout.sh failed"
for gone in .git course/solutions course/cheats course/instructor docs/course/instructor.md; do
  [[ ! -e $copy/$gone ]] || fail "the hand-out holds $gone"
done
for kept in course/exercises/02-nested-wait/nested_wait.hpp scripts/grade-exercise.sh scripts/new-pool.sh docs/course/README.md; do
  [[ -f $copy/$kept ]] || fail "the hand-out lacks $kept"
done

cd "$copy" || fail "no copy"
export CCACHE_BASEDIR=$copy CCACHE_NOHASHDIR=1  # compiles what the source tree did: ccache hits
step "configure and build the hand-out (release, -DPOOLS_WERROR=ON)"
cmake --preset release -DPOOLS_WERROR=ON >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; fail "the hand-out does not configure"; }
nice cmake --build build -j "$(nproc)" >"$work/build.log" 2>&1 || { grep -m5 -A5 error "$work/build.log"; fail "the hand-out does not build"; }
grep -q "_solution" build/build.ninja && fail "the hand-out's build still has *_solution targets"

for dir in course/exercises/*/; do
  id=$(basename "$dir")
  [[ -f $dir/CMakeLists.txt ]] || continue
  expect=$(tr '\n' ' ' <"$dir/CMakeLists.txt" | grep -oE 'EXPECT_FAILURE[[:space:]]+"[^"]*"' | sed -E 's/^EXPECT_FAILURE[[:space:]]+"//; s/"$//; s/\\\\/\\/g')
  [[ -n $expect ]] || fail "$id: no EXPECT_FAILURE in its CMakeLists.txt"
  step "grade $id's starting point: FAIL with /$expect/"
  out=$(scripts/grade-exercise.sh "$id" --out "$work/grade-$id" 2>&1)
  rc=$?
  [[ $rc -eq 1 ]] || { tail -20 <<<"$out"; fail "$id: grade-exercise.sh exit $rc, expected 1 (FAIL)"; }
  grep -Eq -- "$expect" <<<"$out" || { tail -20 <<<"$out"; fail "$id: the FAIL does not give the reason /$expect/"; }
  grep -E -m1 -- "$expect" <<<"$out" | cut -c1-160
done

step "01-first-pool: the scaffold fails saying why (tests/check_new_pool.sh on the hand-out)"
tests/check_new_pool.sh "$copy" >"$work/scaffold.log" 2>&1
rc=$?
[[ $rc -eq 77 ]] || { tail -20 "$work/scaffold.log"; fail "check_new_pool.sh on the hand-out: exit $rc, expected 77 (no solution to try)"; }
grep "not implemented yet" "$work/scaffold.log" | head -1
step "the hand-out configures, builds, and every starting point fails its grader with its reason"
