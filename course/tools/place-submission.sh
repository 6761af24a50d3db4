#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Puts one student's submission into a tree, where the exercise's grader will find it: the one place
# scripts/grade-class.sh and scripts/gradescope.sh's run_autograder do it.
#
#   course/tools/place-submission.sh EXERCISE SUBMISSION_DIR TREE [NAME]
#
# Every exercise: ANSWERS.md, the written answers, found by name anywhere under SUBMISSION_DIR,
#         goes to TREE/course/exercises/EXERCISE/ when there is one.
# 02..07: each file of the exercise's pools_add_exercise FILES, found the same way, is copied over
#         the starting point in TREE/course/exercises/EXERCISE/.
# 01:     scripts/new-pool.sh NAME in TREE (default NAME: student), then the student's pool.hpp
#         (and tests/pool_test.cpp, if any) into variants/NAME/, their pools::<their name>
#         renamed pools::NAME.
# 01's pool.hpp must pass the static check (course/tools/grade_static.py) first: one FAIL line per problem.
# Prints one "not handed in: FILE" line per missing file (to stdout, as a grader's FAIL reason) and
# exits 1 when a file is missing; 2 for a bad argument.
set -uo pipefail
[[ $# -eq 3 || $# -eq 4 ]] || { echo "usage: course/tools/place-submission.sh EXERCISE SUBMISSION_DIR TREE [NAME]" >&2; exit 2; }
id=$1 sub=$2 tree=$3 name=${4:-student}
[[ -d $tree/course/exercises/$id ]] || { echo "place-submission.sh: no exercise '$id' in $tree" >&2; exit 2; }
[[ -d $sub ]] || { echo "place-submission.sh: no submission folder '$sub'" >&2; exit 2; }

# A file of the submission, by name, wherever the student put it (the top, or a folder).
find_file() { find "$sub" -name "$1" -type f | LC_ALL=C sort | head -1; }

# The written answers (the page's "What to hand in"), when handed in: beside the files, for the
# graders to collect; graded by hand, so a missing one is said, not failed.
answers=$(find_file ANSWERS.md)
# 01 asks its questions in the pool's own README (variants/NAME/README.md): that is its answers.
[[ -n $answers || $id != 01-first-pool ]] || answers=$(find_file README.md)
if [[ -n $answers ]]; then
  cp "$answers" "$tree/course/exercises/$id/ANSWERS.md"
else
  rm -f "$tree/course/exercises/$id/ANSWERS.md"
  echo "  note  no ANSWERS.md handed in (the written answers, graded by hand)"
fi

if [[ $id == 01-first-pool ]]; then
  hpp=$(find_file pool.hpp)
  [[ -n $hpp ]] || { echo "  FAIL  not handed in: pool.hpp"; exit 1; }
  # The static check (course/tools/grade_static.py) before the pool is compiled into the conformance
  # suite: a #define CHECK(...) in it would switch the suite's checks off. 02..07 are checked by
  # scripts/grade-exercise.sh, in the tree they are graded in.
  if ! refused=$(python3 "$(dirname "$0")/grade_static.py" "$id" "$hpp"); then
    sed 's/^/  FAIL  the static check refused the submission: /' <<<"$refused"
    exit 1
  fi
  (cd "$tree" && scripts/new-pool.sh "$name" >/dev/null) || exit 2
  theirs=$(grep -oE 'namespace pools::[a-z][a-z0-9_]*' "$hpp" | head -1 | sed 's/.*:://')
  rename() {
    if [[ -n $theirs ]]; then sed -E "s/\bpools::$theirs\b/pools::$name/g; s|pools/$theirs/|pools/$name/|g" "$1"; else cat "$1"; fi
  }
  rename "$hpp" >"$tree/variants/$name/include/pools/$name/pool.hpp"
  test=$(find "$sub" -path '*tests/pool_test.cpp' -type f | LC_ALL=C sort | head -1)
  [[ -z $test ]] || rename "$test" >"$tree/variants/$name/tests/pool_test.cpp"
  exit 0
fi

# The FILES of the exercise's pools_add_exercise call, read as text (as grade-exercise.sh does).
read -ra files <<<"$(tr '\n' ' ' <"$tree/course/exercises/$id/CMakeLists.txt" |
  grep -oE 'FILES[[:space:]]+[^)]*' | sed -E 's/^FILES[[:space:]]+//; s/[[:space:]][A-Z_]+[[:space:]].*//')"
missing=0
for f in "${files[@]}"; do
  src=$(find_file "$f")
  if [[ -n $src ]]; then
    cp "$src" "$tree/course/exercises/$id/$f"
  else
    echo "  FAIL  not handed in: $f"
    missing=1
  fi
done
exit $missing
