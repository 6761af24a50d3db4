#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves the students' hand-out (ctest -R handout_tree), on a copy of SOURCE_TREE made a git
# checkout of its own (so that a fix can be made in it):
#   - scripts/make-handout.sh refuses bad arguments (exit 2): no OUT, an unknown exercise, a
#     non-empty folder that is not a hand-out, a folder inside the tree;
#   - `make-handout.sh OUT EXERCISES` makes a git repository with one commit and a clean tree,
#     holding the named exercises only, and nothing of the instructor's: no solution, cheat,
#     hidden test, rubric key or ANSWERS.md (by path, by marker, and by content: no file of the
#     hand-out equals a file under course/solutions, course/cheats or course/instructor);
#   - a student's clone configures (release preset, warnings as errors) and builds the named
#     exercises, and each exercise's starting point FAILs its grader with its reason
#     (EXPECT_FAILURE of its CMakeLists.txt);
#   - a fix published mid-term: the student commits their own work, the instructor changes a
#     given file of the tree and runs make-handout.sh on the same OUT: a new commit on top of the
#     first (not a new history), none when nothing changed; `git pull --no-rebase` in the
#     student's clone merges it with the student's commit, both kept, and the exercise still
#     builds and grades; an OUT with uncommitted changes is refused.
#
#   course/tests/check_handout.sh SOURCE_TREE [EXERCISE...]   (default: 02-nested-wait 03-work-stealing;
#                                                          KEEP=1: keep the work folder to look at)
set -uo pipefail
src=$(cd "$1" && pwd)
shift
exercises=("$@")
[[ ${#exercises[@]} -gt 0 ]] || exercises=(02-nested-wait 03-work-stealing)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -z ${KEEP:-} ]] || { trap - EXIT; echo "check_handout: work folder $work"; }
fail() { echo "check_handout: FAIL: $*" >&2; exit 1; }
step() { echo "== $* ($SECONDS s)"; }
git_() { git -c user.name=check -c user.email=check@localhost -c init.defaultBranch=main "$@"; }

step "a copy of the tree, as a git checkout of its own"
tree=$work/tree
"$src/course/tools/copy-tree.sh" "$src" "$tree" || fail "copy-tree.sh failed"
rm -rf "$tree/build"* "$tree/grade"
(cd "$tree" && git_ init -q && git_ add -A && git_ commit -qm "the tree") || fail "cannot make the copy a git checkout"
make=$tree/scripts/make-handout.sh

step "bad arguments: exit 2"
mkdir -p "$work/full" && touch "$work/full/file"
expect2() {
  local pattern=$1 out
  shift
  out=$("$make" "$@" 2>&1)
  [[ $? -eq 2 ]] || fail "make-handout.sh $*: not exit 2: $out"
  grep -Eq -- "$pattern" <<<"$out" || fail "make-handout.sh $*: no /$pattern/ in: $out"
  echo "   make-handout.sh ${*/#$work/WORK} -> $(head -1 <<<"$out")"
}
expect2 "usage: "
expect2 "no exercise 'nope'; known exercises: 01-first-pool" "$work/h" nope
expect2 "not empty and not a hand-out" "$work/full"
expect2 "inside this tree" "$tree/course/out" 02-nested-wait
[[ ! -e $work/h ]] || fail "a refused run left $work/h behind"

step "make-handout.sh OUT ${exercises[*]}"
out=$work/handout
"$make" "$out" "${exercises[@]}" || fail "make-handout.sh failed"
[[ $(git -C "$out" rev-list --count HEAD) -eq 1 ]] || fail "the hand-out's history is not one commit"
[[ -z $(git -C "$out" status --porcelain) ]] || fail "the hand-out has uncommitted files: $(git -C "$out" status --porcelain | head -3)"
have=$(cd "$out/course/exercises" && ls | tr '\n' ' ')
[[ $have == "${exercises[*]} " ]] || fail "the hand-out has exercises '$have', not '${exercises[*]}'"
for gone in course/solutions course/cheats course/instructor docs/course/instructor.md; do
  [[ ! -e $out/$gone ]] || fail "the hand-out holds $gone"
done
[[ -z $(git -C "$out" ls-files '*ANSWERS.md') ]] || fail "the hand-out holds an ANSWERS.md"
markers="REFERENCE[ ]SOLUTION|INSTRUCTOR[ ]ONLY|A[ ]CHEAT|CHEAT[ ]\(instructor"
hits=$(git -C "$out" grep -lE "$markers" || true)
[[ -z $hits ]] || fail "instructor markers (/$markers/) in the hand-out: $hits"
# By content: a file of the instructor's copied under another name is caught too.
declare -A secret=()
while read -r sum path; do secret[$sum]=$path; done < <(cd "$tree" && find course/solutions course/cheats course/instructor -type f -exec sha256sum {} + 2>/dev/null)
while read -r sum path; do
  [[ -z ${secret[$sum]:-} ]] || fail "the hand-out's $path is the instructor's ${secret[$sum]}"
done < <(cd "$out" && git ls-files -z | xargs -0 sha256sum)
echo "   $(git -C "$out" ls-files | wc -l) files, no instructor material (paths, markers, ${#secret[@]} instructor files by content)"

step "a student's clone: configure (release, -DPOOLS_WERROR=ON) and build ${exercises[*]}"
student=$work/student
git_ clone -q "$out" "$student" || fail "git clone of the hand-out failed"
cd "$student" || fail "no clone"
export CCACHE_BASEDIR=$student CCACHE_NOHASHDIR=1  # the source tree's compiles: ccache hits
cmake --preset release -DPOOLS_WERROR=ON >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; fail "the hand-out does not configure"; }
grep -q "_solution" build/build.ninja && fail "the hand-out's build has *_solution targets"
targets=()
for id in "${exercises[@]}"; do [[ -f course/exercises/$id/CMakeLists.txt ]] && targets+=("exercise_$id"); done
nice cmake --build build --target "${targets[@]}" -j "$(nproc)" >"$work/build.log" 2>&1 ||
  { grep -m5 -A5 error "$work/build.log"; fail "the hand-out does not build ${targets[*]}"; }

grade_fails() {  # ID: the starting point (or the student's edit of it) FAILs with the exercise's reason
  local id=$1 expect out rc
  expect=$(tr '\n' ' ' <"course/exercises/$id/CMakeLists.txt" | grep -oE 'EXPECT_FAILURE[[:space:]]+"[^"]*"' | sed -E 's/^EXPECT_FAILURE[[:space:]]+"//; s/"$//; s/\\\\/\\/g')
  [[ -n $expect ]] || fail "$id: no EXPECT_FAILURE in its CMakeLists.txt"
  out=$(scripts/grade-exercise.sh "$id" --out "$work/grade-$id" 2>&1)
  rc=$?
  [[ $rc -eq 1 ]] || { tail -20 <<<"$out"; fail "$id: grade-exercise.sh exit $rc, expected 1 (FAIL)"; }
  grep -Eq -- "$expect" <<<"$out" || { tail -20 <<<"$out"; fail "$id: the FAIL does not give the reason /$expect/"; }
  echo "   $id: $(grep -E -m1 -- "$expect" <<<"$out" | cut -c1-140)"
}
for id in "${exercises[@]}"; do
  [[ -f course/exercises/$id/CMakeLists.txt ]] || continue
  step "grade $id's starting point in the clone: FAIL with its reason"
  grade_fails "$id"
done

first=${exercises[0]}
step "a fix published mid-term, merged into the student's own work"
# The student's commit: a line in the file they edit.
file=$(tr '\n' ' ' <"course/exercises/$first/CMakeLists.txt" | grep -oE 'FILES[[:space:]]+[^ ]+' | awk '{print $2}')
echo "// the student's note: started on the fix" >>"course/exercises/$first/$file"
git_ commit -qam "my work on $first" || fail "the student cannot commit"
# The instructor's fix: a given file of the exercise (its check), changed in the tree.
fixed=course/exercises/$first/check.cpp
echo "// Fixed mid-term: this line is the published fix." >>"$tree/$fixed"
(cd "$tree" && git_ commit -qam "a fix of $first's check") || fail "cannot commit the fix in the tree"
echo "   a stray edit" >>"$out/README.md"
out_msg=$("$make" -m "$first: the check fixed" "$out" 2>&1)
[[ $? -eq 2 && $out_msg == *"uncommitted changes"* ]] || fail "a hand-out with uncommitted changes was not refused: $out_msg"
git -C "$out" checkout -q -- README.md
"$make" -m "$first: the check fixed" "$out" || fail "make-handout.sh on the existing hand-out failed"
[[ $(git -C "$out" rev-list --count HEAD) -eq 2 ]] || fail "the re-published hand-out has not two commits: $(git -C "$out" log --oneline)"
git -C "$out" diff --quiet HEAD~1 HEAD -- README.md || fail "the re-published hand-out changed more than the fix: $(git -C "$out" diff --stat HEAD~1 HEAD)"
[[ $(git -C "$out" diff --name-only HEAD~1 HEAD) == "$fixed" ]] || fail "the update commit changed $(git -C "$out" diff --name-only HEAD~1 HEAD | tr '\n' ' '), not only $fixed"
echo "   the update: $(git -C "$out" log -1 --format=%s), changing $fixed only"
"$make" "$out" >"$work/again.log" 2>&1 || fail "a run with nothing to publish failed: $(cat "$work/again.log")"
grep -q "unchanged" "$work/again.log" && [[ $(git -C "$out" rev-list --count HEAD) -eq 2 ]] ||
  fail "a run with nothing changed made a commit: $(cat "$work/again.log")"
git_ pull -q --no-rebase || fail "git pull in the student's clone did not merge the fix"
grep -q "the published fix" "$fixed" || fail "the fix is not in the student's clone after git pull"
grep -q "the student's note" "course/exercises/$first/$file" || fail "the student's own commit was lost in the merge"
[[ $(git rev-list --count HEAD) -eq 4 ]] || fail "the student's history is not hand-out, their commit, fix, merge: $(git log --oneline)"
echo "   the student's clone after git pull: $(git log --oneline | wc -l) commits, their note and the fix both in"
cmake --build build --target "exercise_$first" -j "$(nproc)" >>"$work/build.log" 2>&1 || fail "the merged clone does not build exercise_$first"
grade_fails "$first"
step "PASS: the hand-out of ${exercises[*]} holds no instructor material, builds, fails each start with its reason, and a fix merges"
