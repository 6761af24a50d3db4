#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes the students' copy of the course pack (docs/course/instructor.md, "What to hand out").
#
#   scripts/make-handout.sh OUTDIR
#
# OUTDIR (new, or empty) receives the files git tracks in this checkout, without:
#   course/solutions/        the reference solutions
#   course/cheats/           the plausible cheats the checks are tested against
#   course/instructor/       the rubrics and answer keys of the written questions
#   docs/course/instructor.md and its links: the instructor's page (what gives answers away)
# and without the history (no .git: the solutions are in it). Builds, grade/ results and other
# untracked files are never copied. The copy configures and builds as it is: without
# course/solutions/ the build registers no *_solution tests, and the checks that need a solution
# skip that part (docs/course/instructor.md). ctest -R handout_tree proves it: the copy
# configures, builds, and every exercise's starting point fails its grader with its reason.
#
# Exit 0 when written; 2 for a bad argument (no OUTDIR, OUTDIR not empty, inside this tree, or
# not a git checkout to copy from).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: scripts/make-handout.sh OUTDIR   (a new or empty folder outside this tree)" >&2; exit 2; }
refuse() { echo "make-handout.sh: $1" >&2; exit 2; }

[[ $# -eq 1 && $1 != -* ]] || usage
out=$1
if [[ -e $out ]]; then
  [[ -d $out ]] || refuse "'$out' exists and is not a folder"
  [[ -z $(ls -A "$out") ]] || refuse "'$out' is not empty; give a new or empty folder"
fi
mkdir -p "$out" || refuse "cannot create '$out'"
out=$(cd "$out" && pwd)
[[ $out != "$root" && $out != "$root"/* ]] || { rmdir "$out" 2>/dev/null || true; refuse "'$out' is inside this tree; pick a folder outside it"; }
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  refuse "$root is not a git checkout: the hand-out is made from the files git tracks"

# What never goes to students: paths, relative to the tree, and everything below them.
instructor_only=(course/solutions course/cheats course/instructor docs/course/instructor.md)

(cd "$root" && git ls-files -z --cached) |
  while IFS= read -r -d '' f; do
    for p in "${instructor_only[@]}"; do [[ $f == "$p" || $f == "$p"/* ]] && continue 2; done
    [[ -f $root/$f ]] && printf '%s\0' "$f"  # a tracked file deleted in the work tree is not copied
  done |
  (cd "$root" && xargs -0 cp --parents -t "$out")

# The pages that link the instructor's page: the link goes, the rest of the line stays true.
sed -i '/^Instructors: \[instructor.md\]/d' "$out/docs/course/README.md"
sed -i '/^The instructor.s side (hand-out, class grading, Gradescope, rubrics) is \[instructor.md\]/d' "$out/docs/course/syllabus.md"
sed -i 's|^(the \[instructor page\](docs/course/instructor.md) says how);$|(the instructor material is not in this copy);|' "$out/README.md"
sed -i 's|\[course/instructor.md\](course/instructor.md) for instructors|the instructor material is not in this copy|' "$out/docs/README.md"

# Nothing of the removed material may be left in the copy.
left=$(grep -rlE "REFERENCE[ ]SOLUTION|INSTRUCTOR[ ]ONLY" "$out" || true)
[[ -z $left ]] || { echo "make-handout.sh: instructor material left in the copy: $left" >&2; exit 1; }

count=$(find "$out" -type f | wc -l)
echo "make-handout: wrote $count files to $out (no history; left out: ${instructor_only[*]})"
echo "  students start with: cd $out && scripts/course-needs.sh 02-nested-wait && cmake --preset release"
