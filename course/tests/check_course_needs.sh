#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grading without root (ctest -R course_needs): on a machine "missing cloc" — simulated with a PATH
# that holds every command of this one except cloc — the graders
#  1. still grade an exercise that does not need cloc (02-nested-wait: its starting point FAILs
#     with its own reason, not for a missing package);
#  2. name cloc, with its Debian package, for the one that does (01-first-pool's report card,
#     scripts/grade.sh), and stop before building anything;
# and scripts/course-needs.sh refuses an unknown exercise with exit 2; and, on a simulated Mac
# (POOLS_COURSE_PLATFORM=Darwin; a PATH with BSD-like sed, Homebrew's gtimeout, gnproc and gsed
# but not the plain GNU names; headers in a Homebrew prefix, fmt missing), it names Homebrew
# formulas, finds headers under the prefix, and says which gnubin folders go first on PATH.
#
#   course/tests/check_course_needs.sh SOURCE_TREE BUILD_DIR     (BUILD_DIR: a configured release tree)
set -uo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_course_needs: $*" >&2; exit 1; }

# Every command on this PATH, except cloc.
mkdir "$work/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  for f in "$d"/*; do
    name=${f##*/}
    [[ -x $f && ! -d $f && $name != cloc && ! -e $work/bin/$name ]] && ln -s "$f" "$work/bin/$name"
  done
done
nocloc=$work/bin
PATH=$nocloc command -v cloc >/dev/null && fail "the simulated PATH still finds cloc"

out=$(PATH=$nocloc "$src/scripts/course-needs.sh" 02-nested-wait 2>&1) || fail "02-nested-wait needs something here: $out"
echo "ok: without cloc, course-needs.sh 02-nested-wait finds nothing missing"

out=$(PATH=$nocloc "$src/scripts/course-needs.sh" 01-first-pool --no-http 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "course-needs.sh 01-first-pool without cloc: exit $rc, expected 1: $out"
grep -q "missing cloc (the command 'cloc'; Debian package cloc)" <<<"$out" || fail "cloc not named: $out"
[[ $(grep -c "missing" <<<"$out") -eq 1 ]] || fail "more than cloc reported missing: $out"
echo "ok: course-needs.sh 01-first-pool names exactly cloc: $(head -1 <<<"$out")"

out=$(cd "$src" && PATH=$nocloc timeout 60 scripts/grade.sh mypool --no-http 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "grade.sh without cloc: exit $rc, expected 1: $out"
grep -q "Debian package cloc" <<<"$out" || fail "grade.sh without cloc does not name it: $out"
grep -q "\[grade\]" <<<"$out" && fail "grade.sh started grading although cloc is missing: $out"
echo "ok: grade.sh (exercise 01's card) stops before building and names cloc"

out=$(cd "$src" && PATH=$nocloc timeout 300 scripts/grade-exercise.sh 02-nested-wait --build-dir "$build" --out "$work/grade" 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "grade-exercise.sh 02-nested-wait without cloc: exit $rc, expected 1 (the start fails): $out"
grep -q "course-needs" <<<"$out" && fail "grade-exercise.sh 02-nested-wait complained about a package: $out"
grep -Eq "deadlock: all [0-9]+ worker" <<<"$out" || fail "02's starting point was not graded (no deadlock reason): $out"
[[ -f $work/grade/report.json ]] || fail "no report.json in --out"
echo "ok: without cloc, grade-exercise.sh 02-nested-wait grades the starting point: FAIL, deadlock named"

# A Mac, simulated: brew says where its prefix is; sed is not GNU's; timeout and nproc exist only
# as Homebrew's g-prefixed names; the headers are under the prefix, all but fmt's.
mac=$work/mac
mkdir -p "$mac/bin" "$mac/homebrew/include"
for f in "$nocloc"/*; do
  case ${f##*/} in timeout | nproc | sed | brew) ;; *) ln -s "$(readlink -f "$f")" "$mac/bin/${f##*/}" ;; esac
done
ln -s "$(command -v timeout)" "$mac/bin/gtimeout"
ln -s "$(command -v nproc)" "$mac/bin/gnproc"
ln -s "$(command -v sed)" "$mac/bin/gsed"
printf '#!/bin/sh\necho "sed: illegal option -- -" >&2; exit 1\n' >"$mac/bin/sed"
printf '#!/bin/sh\necho %s\n' "$mac/homebrew" >"$mac/bin/brew"
chmod +x "$mac/bin/sed" "$mac/bin/brew"
for h in boost doctest nlohmann; do ln -s "/usr/include/$h" "$mac/homebrew/include/$h"; done
out=$(PATH=$mac/bin POOLS_COURSE_PLATFORM=Darwin "$src/scripts/course-needs.sh" 02-nested-wait 2>&1)
rc=$?
[[ $rc -eq 1 ]] || fail "course-needs.sh on the simulated Mac: exit $rc, expected 1: $out"
for line in "missing <fmt/format.h> (Homebrew formula fmt, looked for in $mac/homebrew/include)" \
            "Homebrew's coreutils has it as 'gtimeout' only" "Homebrew's coreutils has it as 'gnproc' only" \
            "Homebrew's gnu-sed has it as 'gsed' only" \
            "export PATH=\"$mac/homebrew/opt/coreutils/libexec/gnubin:$mac/homebrew/opt/gnu-sed/libexec/gnubin:\$PATH\"" \
            "brew install fmt "; do
  grep -qF -- "$line" <<<"$out" || fail "the simulated Mac: no '$line' in: $out"
done
grep -q "boost\|Debian" <<<"$out" && fail "the simulated Mac: boost reported missing, or a Debian package named: $out"
echo "ok: on a simulated Mac, course-needs.sh names the formula (fmt), the gnubin PATH for gtimeout, gnproc, gsed:"
sed 's/^/    /' <<<"$out"

out=$("$src/scripts/course-needs.sh" no-such-exercise 2>&1)
[[ $? -eq 2 ]] || fail "course-needs.sh no-such-exercise: not exit 2: $out"
echo "ok: course-needs.sh no-such-exercise -> exit 2: $out"
echo "the graders check only what each exercise needs, and name what is missing"
