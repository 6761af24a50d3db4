#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/tidy.sh's result cache on a three-file project in a temporary folder (the repo's
# .clang-tidy and tidy.sh, a hand-written compile_commands.json): a cold run reports what the
# uncached run reports; a warm run re-checks nothing; a changed header re-checks exactly the TUs
# that include it; a finding in a cached TU is found (also one that only a removed NOLINT comment
# uncovers, which the preprocessed text alone cannot show); a TU with a finding is never cached.
#   [CXX=clang++] tests/check-tidy-cache.sh SOURCE_DIR    exit 77 (skipped) without clang-tidy
#                                                          or a Clang compiler
set -euo pipefail
src=$(cd "${1:?usage: check-tidy-cache.sh SOURCE_DIR}" && pwd)
command -v clang-tidy >/dev/null || { echo "skipped: no clang-tidy"; exit 77; }
cxx=$(command -v "${CXX:-clang++}" || true)
[[ $cxx == *clang* ]] || { echo "skipped: no Clang compiler (CXX=${CXX:-clang++})"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
p=$tmp/project
mkdir -p "$p/scripts" "$p/common/include" "$p/common/src" "$p/common/tests" "$p/build"
cp "$src/scripts/tidy.sh" "$p/scripts/"
cp "$src/.clang-tidy" "$p/"
cat >"$p/common/include/util.hpp" <<'H'
#pragma once
#include <string>
inline std::size_t twice(const std::string& s) { return 2 * s.size(); }
H
cat >"$p/common/src/a.cpp" <<'C'
#include "util.hpp"
std::size_t a(const std::string& s) { return twice(s); }
C
cat >"$p/common/src/b.cpp" <<'C'
#include "util.hpp"
#include <vector>
bool b(const std::vector<int>& v) { return v.size() == 0; } // NOLINT(readability-container-size-empty)
C
# A test: the by-value parameter is no finding there (tidy.sh turns the check off for tests).
cat >"$p/common/tests/c.cpp" <<'C'
#include <string>
std::size_t c(std::string s) { return s.size(); }
C
python3 - "$p" "$cxx" <<'PY'
import json, sys
p, cxx = sys.argv[1], sys.argv[2]
db = [{"directory": p + "/build", "file": p + "/common/" + f,
       "command": "%s -I%s/common/include -std=c++20 -o %s.o -c %s/common/%s" % (cxx, p, f, p, f)}
      for f in ("src/a.cpp", "src/b.cpp", "tests/c.cpp")]
json.dump(db, open(p + "/build/compile_commands.json", "w"), indent=1)
PY

export POOLS_TIDY_CACHE=$tmp/cache
fail=0
run() {  # run NAME EXPECTED_EXIT EXPECTED_FROM_CACHE: one tidy.sh run, checked
  local rc=0
  (cd "$p" && scripts/tidy.sh build) >"$tmp/$1.out" 2>&1 || rc=$?
  local cached
  cached=$(sed -En 's/^tidy.sh: .* ([0-9]+) from the cache\).*/\1/p' "$tmp/$1.out")
  if [[ $rc != "$2" || $cached != "$3" ]]; then
    echo "FAIL $1: exit $rc (want $2), $cached from the cache (want $3):"
    cat "$tmp/$1.out"
    fail=1
  else
    echo "ok   $1: exit $rc, $cached from the cache"
  fi
}
findings() { grep -v '^tidy.sh: ' "$tmp/$1.out" || true; }
same_findings() {  # same_findings A B: the two runs report the same findings
  if [[ $(findings "$1") != "$(findings "$2")" ]]; then
    echo "FAIL $1 and $2 report different findings:"; cat "$tmp/$1.out" "$tmp/$2.out"; fail=1
  fi
}

POOLS_TIDY_CACHE=off run uncached 0 0
run cold 0 0
run warm 0 3
# A real content change in the header: a and b include it, c does not.
sed -i 's/2 \* s.size()/s.size() + s.size()/' "$p/common/include/util.hpp"
run header_changed 0 1
run header_warm 0 3
# A finding in the header (a by-value string): both TUs that include it report it, uncached too.
echo 'inline std::size_t thrice(std::string s) { return 3 * s.size(); }' >>"$p/common/include/util.hpp"
POOLS_TIDY_CACHE=off run header_finding_uncached 1 0
run header_finding 1 1
same_findings header_finding_uncached header_finding
grep -q '^common/include/util.hpp:4:.*performance-unnecessary-value-param' "$tmp/header_finding.out" \
  || { echo "FAIL header_finding: the finding is not reported in util.hpp"; fail=1; }
run header_finding_again 1 1  # TUs with a finding are never cached
# The header as it was at header_warm: the keys of that run come back.
sed -i '$d' "$p/common/include/util.hpp"
run header_fixed 0 3
# A finding in a cached TU that only a comment hid: -E drops comments, the file's hash does not.
sed -i 's| // NOLINT.*||' "$p/common/src/b.cpp"
run nolint_removed 1 2
grep -q '^common/src/b.cpp:3:.*readability-container-size-empty' "$tmp/nolint_removed.out" \
  || { echo "FAIL nolint_removed: the finding in b.cpp is not reported"; fail=1; }
# A new finding in a cached TU.
sed -i 's|v.size() == 0|v.empty()|' "$p/common/src/b.cpp"
run b_fixed 0 2
echo 'bool a_empty(const std::string& s) { return s.size() == 0; }' >>"$p/common/src/a.cpp"
run a_finding 1 2
grep -q '^common/src/a.cpp:3:.*readability-container-size-empty' "$tmp/a_finding.out" \
  || { echo "FAIL a_finding: the finding in a.cpp is not reported"; fail=1; }
exit $fail
