#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks that a variant's textbook pool reads in one sitting: its files (the header
# include/pools/<name>/textbook_pool.hpp and any src/*textbook*.cpp) hold at most LIMIT lines of
# code, counted by cloc (blank lines and comments excluded), and prints the count per file.
# A line that is only a trace hook (POOLS_TRACE_...(...); pools/trace.hpp, maybe under an
# `if (...)`), or the include of that header, is not counted: it compiles to nothing in a default
# build and is not the pool's idea.
#
#   tests/check_textbook_size.sh <variant folder> [LIMIT=150]
set -euo pipefail
dir=${1:?usage: check_textbook_size.sh <variant folder> [limit]}
limit=${2:-150}
name=$(basename "$dir")
command -v cloc >/dev/null || { echo "check_textbook_size: cloc is not installed (scripts/bootstrap.sh installs it)" >&2; exit 2; }
mapfile -t files < <(ls "$dir/include/pools/$name/textbook_pool.hpp" "$dir"/src/*textbook*.cpp 2>/dev/null || true)
[[ ${#files[@]} -gt 0 ]] || { echo "check_textbook_size: no textbook pool in $dir" >&2; exit 2; }
total=0
for f in "${files[@]}"; do
  # --csv: "files,language,blank,comment,code" rows; the SUM row is absent for one file.
  stripped=$(mktemp --suffix=.cpp)
  grep -Ev '^[[:space:]]*((if \(.*\) )?POOLS_TRACE_[A-Z_]+\(.*\);[[:space:]]*(//.*)?|#include <pools/trace\.hpp>)$' "$f" \
    >"$stripped" || true
  code=$(cloc --quiet --csv --force-lang="C++" "$stripped" | awk -F, '$2 == "C++" { print $5 }')
  rm -f "$stripped"
  echo "$code code lines  $f"
  total=$((total + code))
done
echo "$total code lines in all (limit $limit; cloc, comments and blank lines not counted)"
if [[ $total -gt $limit ]]; then
  echo "check_textbook_size: the textbook pool of $name has $total code lines, more than $limit" >&2
  exit 1
fi
