#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copies the source tree as it is (tracked files and untracked files that are not ignored: no build
# folders) into DEST, for the tests that configure and build a modified copy of the project.
#
#   course/tools/copy-tree.sh SOURCE_TREE DEST
set -euo pipefail
src=$(cd "$1" && pwd)
dest=$2
mkdir -p "$dest"
(cd "$src" && { git ls-files -z --cached --others --exclude-standard 2>/dev/null ||
                find . -type f -not -path './build*' -not -path './.git/*' -print0; }) |
  while IFS= read -r -d '' f; do [[ -f "$src/$f" ]] && printf '%s\0' "$f"; done |
  (cd "$src" && xargs -0 cp --parents -t "$dest")
