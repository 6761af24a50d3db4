#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs the outside project examples/consumer (coroutines + futures) the three ways the
# README's "Use a pool in your project" shows, from the checkout as it is (no network):
#  1. install: the libraries alone configured, built and installed into a fresh prefix; the
#     consumer finds them with find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures);
#     a find_package() of an unknown component, and of a component the installation did not
#     build (a second, futures-only install), must fail with a message naming it;
#  2. add_subdirectory(<checkout>);
#  3. FetchContent_Declare(pools SOURCE_DIR <checkout>).
# In 2 and 3 pools is a subproject: only libraries may be defined (no tests_*, bench_*, server_*,
# exercise_* target), and doctest, oneTBB and OpenMP are made unfindable to show they are not needed.
#
#   scripts/check-consumer.sh SOURCE_TREE      (CXX picks the compiler; KEEP=1 keeps the work dir)
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -z ${KEEP:-} ]] || { trap - EXIT; echo "work dir: $work"; }
fail() { echo "check-consumer: $*" >&2; exit 1; }
step() { echo "== $*"; }
quiet() {  # runs a command, showing its output only when it fails
  "$@" >"$work/step.log" 2>&1 || { tail -40 "$work/step.log" >&2; fail "failed: $*"; }
}

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
[[ -z ${CXX:-} ]] || common+=(-DCMAKE_CXX_COMPILER="$CXX")
if command -v ccache >/dev/null; then common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
libraries_only=(-DPOOLS_BUILD_TESTS=OFF -DPOOLS_BUILD_BENCH=OFF -DPOOLS_BUILD_SERVER=OFF -DPOOLS_BUILD_COURSE=OFF)
not_needed=(-DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON -DCMAKE_DISABLE_FIND_PACKAGE_TBB=ON
            -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON)

run_consumer() {  # <build dir>: builds the consumer target and runs it
  quiet cmake --build "$1" --target consumer
  "$1/consumer" || fail "the consumer built in $1 gave a wrong answer"
}

step "1. install into a fresh prefix, then find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures)"
quiet cmake -S "$src" -B "$work/pools" "${common[@]}" "${libraries_only[@]}"
quiet cmake --build "$work/pools"
quiet cmake --install "$work/pools" --prefix "$work/prefix"
[[ -f $work/prefix/lib/cmake/pools/poolsConfigVersion.cmake ]] || fail "no poolsConfigVersion.cmake installed"
quiet cmake -S "$src/examples/consumer" -B "$work/package" "${common[@]}" -DCMAKE_PREFIX_PATH="$work/prefix"
run_consumer "$work/package"

# A project that asks for components, to see find_package() refuse the wrong ones.
mkdir -p "$work/ask"
cat >"$work/ask/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(ask LANGUAGES CXX)
find_package(pools CONFIG REQUIRED COMPONENTS ${ASK})
CMAKE
expect_refusal() {  # <prefix> <component> <regex the message must match>
  if cmake -S "$work/ask" -B "$work/ask-build-$2" -DCMAKE_PREFIX_PATH="$1" -DASK="futures;$2" \
      >"$work/ask.log" 2>&1; then
    fail "find_package(pools COMPONENTS futures $2) succeeded; it must fail"
  fi
  grep -Eq "$3" "$work/ask.log" || { cat "$work/ask.log" >&2; fail "the refusal of '$2' does not say '$3'"; }
  echo "   refused, as it must: $(grep -Eo "pools: component '$2'[^;]*" "$work/ask.log" | head -1)"
}
expect_refusal "$work/prefix" nosuch "component 'nosuch' is not a component of pools"
quiet cmake -S "$src" -B "$work/pools-futures" "${common[@]}" "${libraries_only[@]}" -DPOOLS_VARIANTS=futures
quiet cmake --build "$work/pools-futures"
quiet cmake --install "$work/pools-futures" --prefix "$work/prefix-futures"
expect_refusal "$work/prefix-futures" fibers "component 'fibers' was not built in this installation"

subproject() {  # <way> <build dir>
  quiet cmake -S "$src/examples/consumer" -B "$2" "${common[@]}" "${not_needed[@]}" -DPOOLS_FROM="$1" \
    -DPOOLS_SOURCE_DIR="$src"
  local extra
  extra=$(cmake --build "$2" --target help | grep -Eo '^(tests|bench|server|exercise|conformance)_[A-Za-z0-9_]*' || true)
  [[ -z $extra ]] || fail "as a subproject ($1), pools defined more than its libraries: $(echo $extra)"
  run_consumer "$2"
}
step "2. add_subdirectory(<checkout>)"
subproject subdirectory "$work/subdirectory"
step "3. FetchContent_Declare(pools SOURCE_DIR <checkout>)"
subproject fetchcontent "$work/fetchcontent"
echo "check-consumer: all three ways build and run"
