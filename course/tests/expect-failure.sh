#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# expect-failure.sh REGEX COMMAND [ARG...]
# Passes when COMMAND exits non-zero (a failed check, not a crash by signal unless the regex is
# about one) and its output matches REGEX: the readable reason a student would see. Used by the
# course self-tests (cmake/course.cmake): an exercise's check must fail on its starting point.
set -uo pipefail
[[ $# -ge 2 ]] || { echo "usage: expect-failure.sh REGEX COMMAND [ARG...]" >&2; exit 2; }
pattern=$1; shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out" | tail -40
if [[ $rc -eq 0 ]]; then
  echo "expect-failure: '$*' passed, but the starting point must fail" >&2; exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$out"; then
  echo "expect-failure: '$*' failed (exit $rc) without the expected reason /$pattern/" >&2; exit 1
fi
echo "expect-failure: failed as expected (exit $rc), reason /$pattern/ shown"
