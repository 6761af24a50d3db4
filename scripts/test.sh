#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs every test: the README's second command, and what CI runs.
#
#   scripts/test.sh                 all presets: release, clang, asan, tsan, handout, fuzz, arm64, portable
#   scripts/test.sh release tsan    only these presets
#
# Each preset is configured with -Werror (warnings are errors on GCC and Clang), built, and its
# whole ctest suite run: unit tests, the conformance suite for every registered executor, bench
# smoke tests, Relacy model checks, server tests. Formatting is checked first; after the clang
# preset's build, clang-tidy checks every translation unit (scripts/tidy.sh, .clang-tidy). The
# clang preset also records scheduler events (-DPOOLS_TRACE=ON): its trace_* tests run every
# bench and server with --trace and check the files (scripts/trace-run.py); the other presets
# build the default, hook-free code.
# "handout" is a futures-only course hand-out configured as if oneTBB, OpenMP, Boost.Context and
# Boost.Fiber were not installed (CMAKE_DISABLE_FIND_PACKAGE_*, CMakePresets.json): it proves a
# hand-out needs only what its variant needs. CMake notes that the Boost.Context switch went
# unused: nothing in a futures-only configuration looks for Boost.Context, which is the point.
# "fuzz" builds the libFuzzer targets of the server core with Clang, ASan and UBSan, replays their
# seed corpora and fuzzes each for 60 s (server/README.md, "Fuzzing").
# "arm64" cross-compiles for Linux arm64 (cmake/toolchain-arm64.cmake) and runs the tests under
# qemu-aarch64: every variant's unit tests, the conformance suites, the server's tests and e2e
# suites, with stress loops scaled down as under the sanitizers; no bench, course or Relacy models
# (docs/reliability.md, "Platforms"). "portable" builds the whole tree on the portable paths only
# (-DPOOLS_PORTABLE=ON: no futex, epoll, eventfd; what macOS and the BSDs build) and runs its tests.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache (used by the build when installed) keys its cache on paths relative to this checkout,
# so a fresh clone in another folder reuses what an earlier build compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

all_presets=(release clang asan tsan handout fuzz arm64 portable)
presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=("${all_presets[@]}")
for p in "${presets[@]}"; do
  [[ " ${all_presets[*]} " == *" $p "* ]] || { echo "test.sh: unknown preset '$p' (known: ${all_presets[*]})" >&2; exit 2; }
done

scripts/bootstrap.sh
# The arm64 cross toolchain, multiarch libraries and qemu-user: only when that preset runs.
if [[ " ${presets[*]} " == *" arm64 "* ]]; then scripts/bootstrap.sh arm64; fi

echo "== format check (.clang-format)"
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find common variants server bench -name '*.[ch]pp')
if [[ ${#sources[@]} -gt 0 ]]; then
  clang-format --dry-run --Werror "${sources[@]}"
fi

[[ " ${presets[*]} " == *" clang "* ]] || echo "== clang-tidy: skipped (it runs with the clang preset)"

jobs=$(nproc)
total_passed=0
total_failed=0
for preset in "${presets[@]}"; do
  echo "== preset $preset: configure, build, test"
  start=$SECONDS
  cmake --preset "$preset" -DPOOLS_WERROR=ON -DPOOLS_REQUIRE_MODEL_CHECKS=ON >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  if [[ $preset == clang ]]; then
    echo "== clang-tidy over the clang preset's translation units"
    scripts/tidy.sh build-clang
  fi
  log=$(mktemp)
  set +e
  ctest --preset "$preset" -j "$jobs" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
  rm -f "$log"
  if [[ -z "$summary" ]]; then
    echo "test.sh: preset $preset ran no tests (ctest exit $rc)" >&2
    exit 1
  fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
  count=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
  total_passed=$((total_passed + count - failed))
  total_failed=$((total_failed + failed))
  echo "== preset $preset: $((count - failed)) passed, $failed failed in $((SECONDS - start)) s"
  if [[ $rc -ne 0 ]]; then
    echo "total: $total_passed passed, $total_failed failed"
    exit 1
  fi
done
echo "total: $total_passed passed, $total_failed failed"
