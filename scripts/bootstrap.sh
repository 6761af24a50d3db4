#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian/Ubuntu packages pools needs, and nothing else. Idempotent: only missing
# packages are installed. As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: scripts/bootstrap.sh            (called by scripts/test.sh and scripts/compare.sh)
#        scripts/bootstrap.sh arm64      the arm64 preset's cross toolchain, :arm64 libraries, qemu
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
  # toolchains and build
  g++ clang libclang-rt-14-dev libomp-dev cmake ninja-build ccache clang-format clang-tidy git
  # libraries (Boost >= 1.74: headers incl. Asio/Beast, Context, Fiber, Program_options)
  libboost-dev libboost-context-dev libboost-fiber-dev libboost-program-options-dev
  libfmt-dev doctest-dev nlohmann-json3-dev libtbb-dev relacy-dev
  # HTTP comparison, tests, plots
  wrk nginx-light curl python3 python3-matplotlib python3-tqdm util-linux
  # the textbook pools' size check (code lines without comments and blanks)
  cloc
  # the instruction-count guard (bench/instructions.py: callgrind, and callgrind.h for its drivers)
  valgrind
)

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  echo "bootstrap: this script supports Debian 12 / Ubuntu (apt). Install the equivalents of:" >&2
  echo "  ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

echo "bootstrap: missing packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "bootstrap: not root; run this, then re-run your command:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
# nginx's package starts a system instance; the HTTP bench runs its own on loopback instead.
if command -v systemctl >/dev/null 2>&1; then systemctl stop nginx >/dev/null 2>&1 || true; fi
echo "bootstrap: installed ${#missing[@]} packages"
