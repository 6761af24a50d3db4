#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian/Ubuntu packages pools needs, and nothing else. Tested on Debian 12
# (bookworm) and Debian 13 (trixie) by scripts/distro-check.sh. Idempotent and fast when all is
# installed (one dpkg-query, no apt call): it runs at the start of scripts/test.sh and compare.sh.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: scripts/bootstrap.sh            (called by scripts/test.sh and scripts/compare.sh)
#        scripts/bootstrap.sh arm64      the arm64 preset's cross toolchain, :arm64 libraries, qemu
#
# A package whose name differs between releases is written "a|b": the first one installed counts;
# if none is, the first one the archive offers is installed. Whatever the archive does not offer
# is named on one line ("not found in this distribution: ..."), and the rest is installed anyway.
set -euo pipefail

# --- arm64 (scripts/test.sh arm64, cmake/toolchain-arm64.cmake) -------------------------------
# Debian's cross compiler, the arm64 builds of the libraries the tests link (multiarch: they
# install beside the amd64 ones, after `dpkg --add-architecture arm64`), and qemu-user to run the
# tests. No OpenMP and no oneTBB: the arm64 preset builds no bench.
arm64_setup() {
  local packages=(g++-aarch64-linux-gnu qemu-user libboost-dev:arm64 libboost-context-dev:arm64
                  libboost-program-options-dev:arm64 libfmt-dev:arm64)
  local missing=() p status
  for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "bootstrap arm64: all ${#packages[@]} packages present"
    return 0
  fi
  echo "bootstrap arm64: missing packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "bootstrap arm64: not root; run this, then re-run your command:" >&2
    echo "  sudo dpkg --add-architecture arm64 && sudo apt-get update &&" \
         "sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  dpkg --add-architecture arm64
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  echo "bootstrap arm64: installed ${#missing[@]} packages"
}
if [[ ${1:-} == arm64 ]]; then
  arm64_setup
  exit
fi

packages=(
  # toolchains and build; libclang-rt-N-dev (sanitizer and libFuzzer runtimes of Clang) is added
  # below with N = the major version of the distribution's clang (14 on Debian 12, 19 on 13)
  g++ clang libomp-dev cmake ninja-build ccache clang-format clang-tidy git
  # the format check's stated version (scripts/test.sh): Debian 12 and 13 both ship it
  clang-format-19
  # libraries (Boost >= 1.74: headers incl. Asio/Beast, Context, Fiber, Program_options)
  libboost-dev libboost-context-dev libboost-fiber-dev libboost-program-options-dev
  libfmt-dev doctest-dev nlohmann-json3-dev libtbb-dev relacy-dev
  # HTTP comparison, tests, plots (nginx-light is Debian 12's small nginx, and on Debian 13 a
  # transitional package for nginx; nginx where it is gone)
  wrk "nginx-light|nginx" curl python3 python3-matplotlib python3-tqdm util-linux
  # the textbook pools' size check (code lines without comments and blanks)
  cloc
  # the instruction-count guard (bench/instructions.py: callgrind, and callgrind.h for its drivers)
  valgrind
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: this script supports Debian 12/13 and Ubuntu (apt). Install the equivalents of:" >&2
  echo "  ${packages[*]} libclang-rt-<clang's major version>-dev" >&2
  exit 1
fi

# The clang runtime matches the clang that `clang` depends on: installed, or to be installed.
clang_major() {
  local deps
  deps=$(dpkg-query -W -f='${Depends}' clang 2>/dev/null || true)
  [[ $deps =~ clang-[0-9]+ ]] || deps=$(apt-cache depends clang 2>/dev/null || true)
  if [[ $deps =~ clang-([0-9]+) ]]; then echo "${BASH_REMATCH[1]}"; fi
}
major=$(clang_major)
# With no package list yet (a new container), "libclang-rt-dev" stands in until apt-get update.
packages+=("libclang-rt${major:+-$major}-dev")

# One dpkg-query for every name (the fast path when all is installed). Only this machine's own
# architecture (or "all") counts: with multiarch, libfmt-dev:arm64 is not the library a native
# build links.
declare -A installed=()
native=$(dpkg --print-architecture)
mapfile -t names < <(printf '%s\n' "${packages[@]}" | tr '|' '\n')
while read -r name arch status; do
  if [[ $status == installed && ($arch == "$native" || $arch == all) ]]; then installed[$name]=1; fi
done < <(dpkg-query -W -f='${Package} ${Architecture} ${db:Status-Status}\n' "${names[@]}" 2>/dev/null || true)

unmet=()  # entries (a|b) none of whose names is installed
for entry in "${packages[@]}"; do
  ok=
  IFS='|' read -ra alts <<<"$entry"
  for a in "${alts[@]}"; do [[ -n "${installed[$a]:-}" ]] && ok=1; done
  [[ -n "$ok" ]] || unmet+=("$entry")
done

if [[ ${#unmet[@]} -eq 0 ]]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

# Whether the archive offers a package (a real one, with a candidate version to install).
offered() {
  local policy
  policy=$(apt-cache policy "$1" 2>/dev/null || true)
  [[ "$policy" =~ $'\n'"  Candidate: "[^\(] ]]
}

# Picks, for each unmet entry, the first alternative the archive offers.
choose() {
  install=()
  notfound=()
  local entry a pick alts
  for entry in "${unmet[@]}"; do
    [[ $entry == libclang-rt-dev ]] && entry="libclang-rt-$(clang_major)-dev"
    IFS='|' read -ra alts <<<"$entry"
    pick=
    for a in "${alts[@]}"; do
      if offered "$a"; then pick=$a; break; fi
    done
    if [[ -n "$pick" ]]; then install+=("$pick"); else notfound+=("${entry//|/ or }"); fi
  done
}
# Something to install: as root, fresh package lists first (a new machine or container may have
# none, and old ones name versions the mirror no longer has).
if [[ $(id -u) -eq 0 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
fi
choose

# One line for what this distribution does not have; the rest is installed all the same, and
# the build says what it leaves out without it (e.g. the Relacy models without relacy-dev).
if [[ ${#notfound[@]} -gt 0 ]]; then
  (IFS=,; echo "bootstrap: not found in this distribution: ${notfound[*]}" | sed 's/,/, /g' >&2)
fi
[[ ${#install[@]} -gt 0 ]] || exit 0
echo "bootstrap: missing packages: ${install[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "bootstrap: not root; run this, then re-run your command:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${install[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "${install[@]}"
# nginx's package starts a system instance; the HTTP bench runs its own on loopback instead.
if command -v systemctl >/dev/null 2>&1; then systemctl stop nginx >/dev/null 2>&1 || true; fi
echo "bootstrap: installed ${#install[@]} packages"
