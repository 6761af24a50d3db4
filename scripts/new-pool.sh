#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Starts a new pool from the scaffold: the first step of a course assignment (docs/course/).
#
#   scripts/new-pool.sh NAME
#   scripts/new-pool.sh --check NAME    only says whether NAME would be accepted (exit 0 or 2)
#
# Creates variants/NAME/ with the sibling variants' shape: CMakeLists.txt (the one
# pools_add_variant call), include/pools/NAME/pool.hpp (pools::NAME::pool, whose post() and
# concurrency() compile but throw "not implemented yet"), tests/pool_test.cpp and a README.md to
# fill in. With no bench/ and no server driver of its own, the build gives it the generic ones
# (bench_NAME, server_NAME), so once the pool passes the conformance suite it runs in the same
# benchmarks and HTTP server as the other pools. Then:
#   cmake --preset release && cmake --build build --target variant_NAME && ctest --test-dir build -R NAME
#
# NAME: a lowercase C++ identifier (a-z, 0-9, _; starting with a letter), not already a folder
# under variants/ and not a name the build reserves. Exit 2 with the reason otherwise.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
templates=$root/scripts/templates/new-pool

usage() { echo "usage: scripts/new-pool.sh NAME   (e.g. scripts/new-pool.sh mypool)" >&2; exit 2; }
refuse() { echo "new-pool.sh: $1" >&2; exit 2; }

check_only=0
if [[ $# -eq 2 && $1 == --check ]]; then check_only=1; shift; fi
[[ $# -eq 1 ]] || usage
name=$1
[[ $name =~ ^[a-z][a-z0-9_]*$ ]] ||
  refuse "'$name' is not a valid name: use lowercase letters, digits and _, starting with a letter (it becomes a C++ namespace and a folder)"
[[ ${#name} -le 32 ]] || refuse "'$name' is longer than 32 characters"
# C++ keywords and names the build already uses for something else.
reserved=" alignas alignof and asm auto bitand bitor bool break case catch char class compl concept const
  consteval constexpr constinit continue co_await co_return co_yield decltype default delete do double
  else enum explicit export extern false float for friend goto if inline int long mutable namespace new
  noexcept not operator or private protected public register requires return short signed sizeof static
  struct switch template this throw true try typedef typeid typename union unsigned using virtual void
  volatile while xor
  common generic bench server detail testing generated std boost pools selftest naive tbb openmp asio_pool
  boost_fiber "
[[ " ${reserved//$'\n'/ } " != *" $name "* ]] || refuse "'$name' is reserved (a C++ keyword or a name the build uses); pick another"
dir=$root/variants/$name
[[ ! -e $dir ]] || refuse "variants/$name already exists; pick another name or remove that folder first"
[[ $check_only -eq 0 ]] || exit 0

fill() { sed "s/@NAME@/$name/g" "$templates/$1" > "$2"; }
mkdir -p "$dir/include/pools/$name" "$dir/tests"
fill CMakeLists.txt.in "$dir/CMakeLists.txt"
fill pool.hpp.in "$dir/include/pools/$name/pool.hpp"
fill pool_test.cpp.in "$dir/tests/pool_test.cpp"
fill README.md.in "$dir/README.md"

cat <<MSG
Created variants/$name/:
  CMakeLists.txt                 pools_add_variant($name ...): conformance, tests, generic bench and server
  include/pools/$name/pool.hpp   pools::$name::pool — post() and concurrency() are yours to write
  tests/pool_test.cpp            its own tests
  README.md                      questions to answer as you go
Next:
  cmake --preset release && cmake --build build --target variant_$name
  ctest --test-dir build -R $name      # fails until post() works: the conformance suite says why
MSG
