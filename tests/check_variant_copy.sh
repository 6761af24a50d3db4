#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves the registration promise of docs/architecture.md: copy a variant folder under a new name,
# change only its pools_add_variant() call, and the conformance suite runs it — no other edit.
#
#   tests/check_variant_copy.sh SOURCE_TREE VARIANT
#
# Works on a throw-away copy of the tracked files; configures only the copy (-DPOOLS_VARIANTS),
# builds its conformance executable and checks that ctest runs conformance cases for it.
set -euo pipefail
src=$(cd "$1" && pwd)
variant=$2
copy="${variant}_copy"
[[ -f "$src/variants/$variant/CMakeLists.txt" ]] || { echo "no variant '$variant' in $src" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$src/course/tools/copy-tree.sh" "$src" "$work"
cp -r "$work/variants/$variant" "$work/variants/$copy"
# The one edit: the name in the registration call.
sed -i -E "s/pools_add_variant\\(\\s*$variant\\b/pools_add_variant($copy/" "$work/variants/$copy/CMakeLists.txt"
grep -q "pools_add_variant($copy" "$work/variants/$copy/CMakeLists.txt" || { echo "registration call not found" >&2; exit 1; }

cmake -S "$work" -B "$work/build" -G Ninja -DPOOLS_VARIANTS="$copy" -DPOOLS_BUILD_BENCH=OFF >/dev/null
cmake --build "$work/build" --target "conformance_$copy" -j "$(nproc)" >/dev/null
out=$(cd "$work/build" && ctest -R "^conformance_${copy}\$" --output-on-failure 2>&1)
echo "$out" | tail -3
echo "$out" | grep -q "100% tests passed, 0 tests failed out of 1" || { echo "conformance_$copy did not pass" >&2; exit 1; }
"$work/build/variants/$copy/conformance_$copy" --list-test-cases | grep -c "conformance:" |
  xargs -I{} echo "conformance_$copy lists {} conformance cases"
