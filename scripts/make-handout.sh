#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes, or updates, the git repository students clone (docs/course/instructor.md, "What to hand out").
#
#   scripts/make-handout.sh [-m MESSAGE] OUT [EXERCISE...]
#
# OUT new (or empty): a git repository is made there (branch main) whose one commit holds the files
# git tracks in this checkout, with only the named exercises (all of them when none is named) and
# never:
#   course/solutions/         the reference solutions
#   course/cheats/            the cheats the checks are tested against
#   course/instructor/        the rubrics, answer keys and hidden tests
#   docs/course/instructor.md the instructor's page
#   course/exercises/<id>/ and docs/course/<id>.md of every exercise not named (links to a page
#                             left out become plain text saying so)
#   any ANSWERS.md            a student's written answers
# and without this checkout's history (the solutions are in it). Builds, grade/ results and other
# untracked files are never copied. Without course/solutions/ the build registers no *_solution
# tests, and everything a student runs works unchanged.
#
# OUT a hand-out this script made (it has .handout, listing its exercises): the hand-out is made
# again from this checkout, with the EXERCISEs named (none named: the ones it has), and committed
# on top of OUT's history with MESSAGE (a fix published mid-term; the students `git pull` it and
# it merges with their own commits). Nothing changed: no commit. OUT with uncommitted changes is
# refused, so nothing of the instructor's is overwritten.
#
# Exit 0 when written (or nothing changed); 1 when instructor material would be left in OUT; 2 for
# a bad argument (no OUT, an unknown exercise, OUT not empty and not a hand-out, OUT with
# uncommitted changes, OUT inside this tree, or this tree not a git checkout).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: scripts/make-handout.sh [-m MESSAGE] OUT [EXERCISE...]   (OUT: a new or empty folder outside this tree, or a hand-out made before)" >&2; exit 2; }
refuse() { echo "make-handout.sh: $1" >&2; exit 2; }

message=
if [[ ${1:-} == -m ]]; then
  [[ $# -ge 2 && -n $2 ]] || usage
  message=$2
  shift 2
fi
[[ $# -ge 1 && $1 != -* ]] || usage
out=$1
shift
git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
  refuse "$root is not a git checkout: the hand-out is made from the files git tracks"
known=$(cd "$root/course/exercises" && ls -d */ | tr -d / | tr '\n' ' ')
for id in "$@"; do
  [[ $id =~ ^[0-9a-z][0-9a-z_-]*$ && -d $root/course/exercises/$id ]] || refuse "no exercise '$id'; known exercises: $known"
done

update=0
if [[ -e $out ]]; then
  [[ -d $out ]] || refuse "'$out' exists and is not a folder"
  if [[ -f $out/.handout && -d $out/.git ]]; then
    update=1
    [[ -z $(git -C "$out" status --porcelain) ]] ||
      refuse "'$out' has uncommitted changes (git -C $out status); commit or discard them first"
  elif [[ -n $(ls -A "$out") ]]; then
    refuse "'$out' is not empty and not a hand-out made by this script; give a new or empty folder"
  fi
fi
mkdir -p "$out" || refuse "cannot create '$out'"
out=$(cd "$out" && pwd)
[[ $out != "$root" && $out != "$root"/* ]] || { rmdir "$out" 2>/dev/null || true; refuse "'$out' is inside this tree; pick a folder outside it"; }

# The exercises: those named; else, on an update, those the hand-out has; else all.
exercises=("$@")
if [[ ${#exercises[@]} -eq 0 && $update -eq 1 ]]; then
  mapfile -t exercises < <(grep -v '^#' "$out/.handout" | grep .)
  for id in "${exercises[@]}"; do
    [[ -d $root/course/exercises/$id ]] || refuse "'$out' has exercise '$id', which this tree does not; name the exercises"
  done
fi
[[ ${#exercises[@]} -gt 0 ]] || read -ra exercises <<<"$known"
mapfile -t exercises < <(printf '%s\n' "${exercises[@]}" | sort -u)

# What never goes to students: paths, relative to the tree, and everything below them.
instructor_only=(course/solutions course/cheats course/instructor docs/course/instructor.md)
left_out=()
for dir in "$root"/course/exercises/*/; do
  id=$(basename "$dir")
  [[ " ${exercises[*]} " == *" $id "* ]] || left_out+=("course/exercises/$id" "docs/course/$id.md")
done

# An update replaces every file the hand-out tracks: a file gone from the tree goes from it too.
if [[ $update -eq 1 ]]; then
  git -C "$out" ls-files -z | (cd "$out" && xargs -0 rm -f --)
  find "$out" -mindepth 1 -depth -type d -empty -not -path "$out/.git" -not -path "$out/.git/*" -delete
fi
(cd "$root" && git ls-files -z --cached) |
  while IFS= read -r -d '' f; do
    for p in "${instructor_only[@]}" "${left_out[@]}"; do [[ $f == "$p" || $f == "$p"/* ]] && continue 2; done
    [[ $(basename "$f") == ANSWERS.md ]] && continue
    [[ -f $root/$f ]] && printf '%s\0' "$f"  # a tracked file deleted in the work tree is not copied
  done |
  (cd "$root" && xargs -0 cp --parents -t "$out")

# The pages that link the instructor's page: the link goes, the rest of the line stays true.
sed -i '/^Instructors: \[instructor.md\]/d' "$out/docs/course/README.md"
sed -i '/^The instructor.s side (hand-out, class grading, Gradescope, rubrics) is \[instructor.md\]/d' "$out/docs/course/syllabus.md"
sed -i 's|^(the \[instructor page\](docs/course/instructor.md) says how);$|(the instructor material is not in this copy);|' "$out/README.md"
sed -i 's|\[course/instructor.md\](course/instructor.md) for instructors|the instructor material is not in this copy|' "$out/docs/README.md"
# A link to the page of an exercise not handed out becomes its text, saying so.
for ((i = 1; i < ${#left_out[@]}; i += 2)); do
  page=$(basename "${left_out[$i]}")
  { grep -rlF --include='*.md' "$page" "$out" || true; } | while read -r md; do
    sed -i -E "s#\[([^]]*)\]\(([./a-z]*/)?${page//./\\.}(\#[^)]*)?\)#\1 (not handed out yet)#g" "$md"
  done
done
{
  echo "# The exercises of this hand-out (scripts/make-handout.sh); your instructor adds the next ones."
  printf '%s\n' "${exercises[@]}"
} >"$out/.handout"

# Nothing of the removed material may be left in the copy.
left=$(grep -rlE --exclude-dir=.git "REFERENCE[ ]SOLUTION|INSTRUCTOR[ ]ONLY|A[ ]CHEAT \(course/cheats|CHEAT[ ]\(instructor only\)" "$out" || true)
[[ -z $left ]] || { echo "make-handout.sh: instructor material left in the copy: $left" >&2; exit 1; }

# Commit: the first one, or one on top of the hand-out's history. The author is the calling
# user's git identity, or the hand-out's own when there is none.
cd "$out"
[[ $update -eq 1 ]] || git init -q -b main
ident=()
git config user.name >/dev/null || ident+=(-c "user.name=course hand-out")
git config user.email >/dev/null || ident+=(-c "user.email=handout@localhost")
git add -A
if git diff --cached --quiet; then
  echo "make-handout: $out unchanged (exercises: ${exercises[*]}); no commit"
  exit 0
fi
if [[ -z $message ]]; then
  if [[ $update -eq 1 ]]; then message="Hand-out updated: ${exercises[*]}"; else message="Hand-out: ${exercises[*]}"; fi
fi
git "${ident[@]}" commit -q -m "$message"
count=$(git ls-files | wc -l)
echo "make-handout: $([[ $update -eq 1 ]] && echo "committed an update to" || echo "made") $out ($count files; exercises: ${exercises[*]}; left out: ${instructor_only[*]}${left_out:+ and the other exercises})"
echo "  students: git clone $out && cd $(basename "$out") && scripts/course-needs.sh ${exercises[0]} && cmake --preset release"
echo "  a fix later: commit it here, then scripts/make-handout.sh -m 'what changed' $out; students: git pull --no-rebase"
