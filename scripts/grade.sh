#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Grades one pool and prints its report card (the course's grader; docs/course/).
#
#   scripts/grade.sh NAME [--out DIR] [--no-bench] [--no-http] [--timeout S] [--class]
#
# Builds variants/NAME under release, asan and tsan; runs its conformance suite one contract rule
# at a time and names each rule that fails; runs a short bench and HTTP run beside the textbook
# pools, the tuned pools, oneTBB and asio::thread_pool; writes grade/NAME/report.md and
# report.json. Exit 0 only when conformance passes clean in all three builds. course/tools/grade.py
# has the details.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache keys on paths relative to this checkout: the sanitizer builds reuse what scripts/test.sh
# (or a grade in another clone) compiled, so a first grade is not three cold builds.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# What the card needs, checked without root (cloc; wrk and nginx unless --no-http): a missing
# tool is named with its Debian package. Installing stays with scripts/bootstrap.sh.
scripts/course-needs.sh 01-first-pool "$@" || exit 1
py=python3
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import json' >/dev/null 2>&1; then py=$candidate; break; fi
done
exec "$py" course/tools/grade.py "$@"
