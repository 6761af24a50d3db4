#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What grading one exercise needs on this machine, checked without root and without installing
# anything (installing stays with scripts/bootstrap.sh, as root).
#
#   scripts/course-needs.sh EXERCISE [--no-http]
#
# Prints one line per missing thing, with the Debian package that provides it:
#   course-needs: missing cloc (the command 'cloc'; Debian package cloc)
# then the one apt-get line that installs them all. Exit 0 when nothing is missing, 1 when
# something is, 2 for an unknown exercise.
#
# Every exercise needs what configuring and building the tree needs (the compiler, CMake, Ninja,
# the libraries the top-level CMakeLists.txt and the variants REQUIRE). On top of that:
#   01-first-pool     cloc (the report card counts the pool's code lines), and, for the card's HTTP
#                     run (not with --no-http), wrk and nginx
#   04-memory-order   relacy-dev (the check is a Relacy model)
# A reference the bench only compares against when it is installed (oneTBB, OpenMP, Boost.Fiber)
# is not a need: the card leaves its row out.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() { echo "usage: scripts/course-needs.sh EXERCISE [--no-http]" >&2; exit 2; }
[[ $# -ge 1 && $1 != -* ]] || usage
id=$1
shift
http=1
for arg in "$@"; do
  case $arg in
    --no-http | --no-bench | --class) http=0 ;;
    *) ;;  # the grader's other options are not about needs
  esac
done
[[ $id =~ ^[0-9a-z][0-9a-z_-]*$ && -d $root/course/exercises/$id ]] || {
  echo "course-needs.sh: no exercise '$id' (course/exercises/$id/)" >&2
  exit 2
}

# "command NAME PACKAGE" or "header PATH PACKAGE" (PATH under an include directory).
needs=(
  "command cmake cmake" "command ninja ninja-build" "command g++ g++" "command python3 python3"
  "command timeout coreutils"
  "header boost/version.hpp libboost-dev" "header boost/program_options.hpp libboost-program-options-dev"
  "header boost/context/fiber.hpp libboost-context-dev" "header fmt/format.h libfmt-dev"
  "header doctest/doctest.h doctest-dev" "header nlohmann/json.hpp nlohmann-json3-dev"
)
case $id in
  01-first-pool)
    needs+=("command cloc cloc")
    [[ $http -eq 0 ]] || needs+=("command wrk wrk" "command nginx nginx-light")
    ;;
  04-memory-order) needs+=("header relacy/relacy.hpp relacy-dev") ;;
esac

have_header() {
  local d
  for d in ${POOLS_INCLUDE_DIRS:-/usr/include /usr/local/include}; do
    [[ -f $d/$1 ]] && return 0
  done
  return 1
}
have_command() {
  # nginx lives in /usr/sbin, which a student's PATH may not hold; run.py looks there too.
  command -v "$1" >/dev/null 2>&1 || { [[ $1 == nginx && -x /usr/sbin/nginx ]]; }
}

missing=()
for need in "${needs[@]}"; do
  read -r kind what package <<<"$need"
  if [[ $kind == command ]] && ! have_command "$what"; then
    echo "course-needs: missing $what (the command '$what'; Debian package $package)" >&2
    missing+=("$package")
  elif [[ $kind == header ]] && ! have_header "$what"; then
    echo "course-needs: missing <$what> (Debian package $package)" >&2
    missing+=("$package")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "course-needs: exercise $id cannot be graded here until $(
  [[ ${#missing[@]} -eq 1 ]] && echo "this package is" || echo "these ${#missing[@]} packages are") installed:" >&2
echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}   (or, as root: scripts/bootstrap.sh)" >&2
exit 1
