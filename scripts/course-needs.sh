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
#
# On macOS (docs/course/README.md, "Working on a Mac") each missing thing is named with its
# Homebrew formula instead, headers are looked for under Homebrew's prefix too (/opt/homebrew on
# Apple silicon, /usr/local on Intel), and the GNU tools the scripts call by their GNU names
# (timeout, nproc; sed) count only as GNU: Homebrew installs them as gtimeout, gnproc and gsed,
# and a line says which folder to put first on PATH so that the plain names are GNU's.
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

# "command NAME PACKAGE FORMULA" or "header PATH PACKAGE FORMULA" (PATH under an include
# directory): PACKAGE is Debian's, FORMULA Homebrew's ("-": Homebrew has none).
needs=(
  "command cmake cmake cmake" "command ninja ninja-build ninja" "command g++ g++ gcc" "command python3 python3 python"
  "command timeout coreutils coreutils" "command nproc coreutils coreutils"
  "header boost/version.hpp libboost-dev boost" "header boost/program_options.hpp libboost-program-options-dev boost"
  "header boost/context/fiber.hpp libboost-context-dev boost" "header fmt/format.h libfmt-dev fmt"
  "header doctest/doctest.h doctest-dev doctest" "header nlohmann/json.hpp nlohmann-json3-dev nlohmann-json"
)
case $id in
  01-first-pool)
    needs+=("command cloc cloc cloc")
    [[ $http -eq 0 ]] || needs+=("command wrk wrk wrk" "command nginx nginx-light nginx")
    ;;
  04-memory-order) needs+=("header relacy/relacy.hpp relacy-dev -") ;;
esac

# macOS: Homebrew's names and folders (POOLS_COURSE_PLATFORM=Darwin pretends, for the test).
platform=${POOLS_COURSE_PLATFORM:-$(uname -s)}
brew_prefix=
if [[ $platform == Darwin ]]; then
  brew_prefix=$(brew --prefix 2>/dev/null || true)
  if [[ -z $brew_prefix ]]; then
    if [[ $(uname -m) == arm64 ]]; then brew_prefix=/opt/homebrew; else brew_prefix=/usr/local; fi
  fi
  needs+=("command sed gnu-sed gnu-sed")
fi

have_header() {
  local d
  # macOS keeps no third-party headers in /usr/include: Homebrew's prefix (and /usr/local) only.
  local dirs="/usr/include /usr/local/include"
  [[ -z $brew_prefix ]] || dirs="$brew_prefix/include /usr/local/include"
  for d in ${POOLS_INCLUDE_DIRS:-$dirs}; do
    [[ -f $d/$1 ]] && return 0
  done
  return 1
}
# The GNU tools, under their plain names: macOS has BSD sed and no timeout or nproc.
gnu_tool() {
  case $1 in
    timeout | nproc) "$1" --version 2>/dev/null | grep -q GNU ;;
    sed) sed --version 2>/dev/null | grep -q GNU ;;
    *) return 0 ;;
  esac
}
gnubin() {  # the Homebrew folder that holds the plain GNU names of formula $1
  echo "$brew_prefix/opt/$1/libexec/gnubin"
}
have_command() {
  # nginx lives in /usr/sbin, which a student's PATH may not hold; run.py looks there too.
  command -v "$1" >/dev/null 2>&1 || { [[ $1 == nginx && -x /usr/sbin/nginx ]]; } || return 1
  [[ -z $brew_prefix ]] || gnu_tool "$1"
}

missing=()
paths=()
for need in "${needs[@]}"; do
  read -r kind what package formula <<<"$need"
  if [[ $kind == command ]] && ! have_command "$what"; then
    if [[ -n $brew_prefix ]] && command -v "g$what" >/dev/null 2>&1; then
      # Installed, under its g-prefixed name (gtimeout, gnproc, gsed): the PATH is what is missing.
      echo "course-needs: the scripts call GNU $what as '$what'; Homebrew's $formula has it as 'g$what' only" >&2
      [[ " ${paths[*]} " == *" $(gnubin "$formula") "* ]] || paths+=("$(gnubin "$formula")")
      continue
    fi
    if [[ -n $brew_prefix ]]; then
      echo "course-needs: missing $what (the command '$what'$([[ $what =~ ^(timeout|nproc|sed)$ ]] && echo ", GNU's"); Homebrew formula $formula)" >&2
      [[ " ${missing[*]} " == *" $formula "* ]] || missing+=("$formula")
    else
      echo "course-needs: missing $what (the command '$what'; Debian package $package)" >&2
      missing+=("$package")
    fi
  elif [[ $kind == header ]] && ! have_header "$what"; then
    if [[ -n $brew_prefix ]]; then
      if [[ $formula == - ]]; then
        echo "course-needs: missing <$what> (Debian package $package; Homebrew has no formula: grade this exercise in the dev container, docs/course/README.md)" >&2
        missing+=("$package")
      else
        echo "course-needs: missing <$what> (Homebrew formula $formula, looked for in $brew_prefix/include)" >&2
        [[ " ${missing[*]} " == *" $formula "* ]] || missing+=("$formula")
      fi
    else
      echo "course-needs: missing <$what> (Debian package $package)" >&2
      missing+=("$package")
    fi
  fi
done
if [[ ${#paths[@]} -gt 0 ]]; then
  echo "course-needs: put the GNU names first on PATH (in ~/.zshrc to keep it):" >&2
  echo "  export PATH=\"$(IFS=:; echo "${paths[*]}"):\$PATH\"" >&2
fi
[[ ${#missing[@]} -eq 0 && ${#paths[@]} -eq 0 ]] && exit 0
[[ ${#missing[@]} -eq 0 ]] && exit 1
echo "course-needs: exercise $id cannot be graded here until $(
  [[ ${#missing[@]} -eq 1 ]] && echo "this package is" || echo "these ${#missing[@]} packages are") installed:" >&2
if [[ -n $brew_prefix ]]; then
  echo "  brew install ${missing[*]}   (or work in the dev container: docs/course/README.md, \"Working on a Mac\")" >&2
else
  echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}   (or, as root: scripts/bootstrap.sh)" >&2
fi
exit 1
