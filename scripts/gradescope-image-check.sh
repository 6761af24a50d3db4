#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a Gradescope autograder the way Gradescope does, in a minimal Debian 13 root standing in
# for Gradescope's base image (docs/course/instructor.md, "Gradescope": what this proves and what
# it assumes), under Gradescope's resource limits, and prints each step's time and peak memory.
#
#   scripts/gradescope-image-check.sh [--cpus N] [--memory MIB] [--namespaces] [--out FILE] EXERCISE
#
# 1. makes the zip (scripts/gradescope.sh EXERCISE) from this tree;
# 2. makes a fresh root: a copy of scripts/distro-check.sh's debootstrapped Debian 13 minbase
#    (/var/cache/pools-distro-check/trixie/base, only read; debootstrapped here when it is missing),
#    so nothing of the project's packages is installed: no compiler, no CMake, no Python;
# 3. unzips the zip into the root's /autograder/source/ and copies run_autograder to
#    /autograder/run_autograder, as Gradescope's harness does;
# 4. runs /autograder/source/setup.sh in the root, as root (Gradescope's image build: it installs
#    the packages from Debian's mirror and builds the exercise once);
# 5. runs /autograder/run_autograder on sample submissions put in /autograder/submission/: the
#    starting point, and the reference solution when this tree has one; prints the results.json
#    Gradescope would show (the score and every test with its output's first line) and checks it:
#    the start scores at most 25 %, the solution full marks.
# The root is a plain chroot: its / is no mount point, so the grader cannot make private namespaces
# there, as in a container without CAP_SYS_ADMIN (Docker's default), and grades "partly isolated"
# (course/tools/grade-sandbox.sh); --namespaces binds the root onto itself first, as a container's
# root is, so the full isolation is what runs (a container allowed to make namespaces).
# Steps 4 and 5 run in a cgroup limited to --cpus CPUs (default 2) and --memory MiB (default 3072),
# the settings docs/course/instructor.md names; the peak memory of each step is its cgroup's
# (page cache included, as a container's memory limit counts it; dropped before each step).
# The record (times, peak memory, scores) is printed and written to --out (default
# $cache/last-run.json).
#
# Needs root (chroot, mounts, cgroups) and Debian's mirror. It keeps its roots under
# /var/cache/pools-gradescope-check/ (POOLS_GRADESCOPE_CACHE moves it): root/ (made again on every
# run, the last one kept to look at) and apt-archives/ (downloaded packages kept between runs;
# seeded from distro-check's trixie root when that has some: dpkg still installs every package).
# It never writes into /var/cache/pools-distro-check/.
# Exit 0 when every step passed; 1 when one failed; 2 for a bad argument.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() { sed -n '3,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cpus=2 memory=3072 out= namespaces=0
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --cpus) [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage; cpus=$2; shift 2 ;;
    --memory) [[ ${2:-} =~ ^[0-9]+$ ]] || usage; memory=$2; shift 2 ;;
    --out) [[ -n ${2:-} ]] || usage; out=$2; shift 2 ;;
    --namespaces) namespaces=1; shift ;;
    *) usage ;;
  esac
done
[[ $# -eq 1 ]] || usage
id=$1
[[ -d $repo/course/exercises/$id ]] || { echo "gradescope-image-check: no exercise '$id'" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "gradescope-image-check: needs root (chroot, mounts, cgroups)" >&2; exit 2; }

cache=${POOLS_GRADESCOPE_CACHE:-/var/cache/pools-gradescope-check}
distro_base=${POOLS_DISTRO_CACHE:-/var/cache/pools-distro-check}/trixie/base
root=$cache/root
out=${out:-$cache/last-run.json}
mkdir -p "$cache/apt-archives/partial"
exec 9>"$cache/lock"
flock -n 9 || { echo "gradescope-image-check: another run holds $cache/lock" >&2; exit 2; }

# Deletes only below $cache, and never through a mount (a bound /dev would be emptied).
safe_rm() {
  local path
  path=$(realpath -m "$1")
  [[ $path == "$cache"/* ]] || { echo "gradescope-image-check: refusing to delete $path" >&2; return 1; }
  if findmnt -rn -o TARGET | awk -v p="$path" '$0 == p || index($0, p "/") == 1 { f = 1 } END { exit !f }'; then
    echo "gradescope-image-check: refusing to delete $path: something is mounted inside it" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$path"
}

# Gradescope's limits: a cgroup (v1 or v2) with a CPU quota and a memory limit; each step's
# peak memory is read from it.
cg_name=pools-gradescope-$$
cg_dirs=()
cgroup_make() {
  local quota=$(awk -v c="$cpus" 'BEGIN { printf "%d", c * 100000 }')
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    mkdir /sys/fs/cgroup/$cg_name && cg_dirs=(/sys/fs/cgroup/$cg_name)
    echo "$((memory << 20))" >"${cg_dirs[0]}/memory.max"
    echo "$quota 100000" >"${cg_dirs[0]}/cpu.max"
  else
    mkdir /sys/fs/cgroup/memory/$cg_name /sys/fs/cgroup/cpu/$cg_name
    cg_dirs=(/sys/fs/cgroup/memory/$cg_name /sys/fs/cgroup/cpu/$cg_name)
    echo "$((memory << 20))" >"${cg_dirs[0]}/memory.limit_in_bytes"
    echo "$quota" >"${cg_dirs[1]}/cpu.cfs_quota_us"
  fi
}
cgroup_fresh() {  # before a step: the cgroup's page cache dropped (v1), so the peak is the step's own
  [[ ! -f ${cg_dirs[0]}/memory.force_empty ]] || echo 0 >"${cg_dirs[0]}/memory.force_empty" 2>/dev/null || true
  [[ ! -f ${cg_dirs[0]}/memory.max_usage_in_bytes ]] || echo 0 >"${cg_dirs[0]}/memory.max_usage_in_bytes" 2>/dev/null || true
}
cgroup_peak_mib() {  # (v2's memory.peak cannot be reset: there, the peak of every step so far)
  local f
  for f in memory.max_usage_in_bytes memory.peak; do
    if [[ -f ${cg_dirs[0]}/$f ]]; then
      echo $(($(cat "${cg_dirs[0]}/$f") >> 20))
      return
    fi
  done
  echo null
}
cleanup() {
  local d
  for d in "${cg_dirs[@]}"; do rmdir "$d" 2>/dev/null || true; done
}
trap cleanup EXIT

# Runs COMMAND in the root, in the cgroup, with /proc, /sys, /dev and the package cache mounted in
# a private mount namespace (they vanish with the process).
in_root() {
  unshare --mount --propagation private -- /bin/bash -euc '
    root=$1 cache=$2 cmd=$3 namespaces=$4; shift 4
    for d in "$@"; do echo $$ >"$d/cgroup.procs"; done
    if [[ $namespaces == 1 ]]; then mount --bind "$root" "$root"; fi
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
    exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/bash -c "$cmd"
  ' gradescope-image-check "$root" "$cache" "$1" "$namespaces" "${cg_dirs[@]}"
}

work=$(mktemp -d)
trap 'cleanup; rm -rf "$work"' EXIT
steps=()  # JSON objects, one per step
record() {  # NAME SECONDS RC PEAK_MIB [EXTRA_JSON]
  steps+=("{\"step\": \"$1\", \"seconds\": $2, \"exit\": $3, \"peak_memory_mib\": $4${5:+, $5}}")
  printf '== %-58s %5s s  exit %s  peak %s MiB\n' "$1" "$2" "$3" "$4"
}

echo "== gradescope-image-check $id: the zip"
"$repo/scripts/gradescope.sh" "$id" "$work/autograder.zip"

echo "== a fresh Debian 13 minbase root in $root"
if [[ ! -d $distro_base ]]; then
  distro_base=$cache/base
  if [[ ! -d $distro_base ]]; then
    command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
    debootstrap --variant=minbase trixie "$cache/base.partial" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1
    mv "$cache/base.partial" "$distro_base"
  fi
fi
[[ -e $root ]] && safe_rm "$root"
cp -a "$distro_base" "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf"
[[ -x $root/usr/sbin/policy-rc.d ]] || { printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"; chmod +x "$root/usr/sbin/policy-rc.d"; }
seed=${POOLS_DISTRO_CACHE:-/var/cache/pools-distro-check}/trixie/root/var/cache/apt/archives
if [[ -z $(find "$cache/apt-archives" -maxdepth 1 -name '*.deb' -print -quit) && -d $seed ]]; then
  find "$seed" -maxdepth 1 -name '*.deb' -exec cp -t "$cache/apt-archives" {} +
fi
for tool in python3 g++ cmake; do
  [[ ! -e $root/usr/bin/$tool ]] || { echo "gradescope-image-check: the root is not bare: it has $tool" >&2; exit 1; }
done

# Gradescope's layout: the zip's content in /autograder/source, run_autograder beside it.
python3 - "$work/autograder.zip" "$root/autograder/source" <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    z.extract(i, sys.argv[2])
    os.chmod(os.path.join(sys.argv[2], i.filename), (i.external_attr >> 16) & 0o777 or 0o644)
PY
cp "$root/autograder/source/run_autograder" "$root/autograder/run_autograder"

cgroup_make
failed=0
start=$SECONDS
rc=0
in_root "/autograder/source/setup.sh" >"$work/setup.log" 2>&1 || rc=$?
setup_s=$((SECONDS - start))
packages=$(chroot "$root" dpkg-query -W -f='.\n' | wc -l)
gcc=$(chroot "$root" g++ -dumpfullversion 2>/dev/null || echo none)
isolation=$(grep -m1 "the grading isolation in this image" "$work/setup.log" | sed 's/.*this image: //; s/"/'"'"'/g' || true)
echo "   $packages packages, g++ $gcc; isolation: $isolation"
record "setup.sh (packages from nothing, then the warm-up build)" "$setup_s" "$rc" "$(cgroup_peak_mib)" \
  "\"packages_installed\": $packages, \"gcc\": \"$gcc\", \"isolation\": \"$isolation\""
if [[ $rc -ne 0 ]]; then
  tail -30 "$work/setup.log"
  echo "gradescope-image-check: setup.sh failed (exit $rc)" >&2
  failed=1
fi

# The sample submissions: the starting point, and the reference solution where there is one.
if [[ $id == 01-first-pool ]]; then
  file=pool.hpp
  sed 's/@NAME@/mine/g' "$repo/scripts/templates/new-pool/pool.hpp.in" >"$work/start"
  [[ ! -f $repo/course/solutions/$id/pool.hpp.in ]] || sed 's/@NAME@/mine/g' "$repo/course/solutions/$id/pool.hpp.in" >"$work/solution"
else
  file=$(tr '\n' ' ' <"$repo/course/exercises/$id/CMakeLists.txt" | grep -oE 'FILES[[:space:]]+[^ ]+' | awk '{print $2}')
  cp "$repo/course/exercises/$id/$file" "$work/start"
  [[ ! -f $repo/course/solutions/$id/$file ]] || cp "$repo/course/solutions/$id/$file" "$work/solution"
fi
for kind in start solution; do
  [[ $failed -eq 0 && -f $work/$kind ]] || continue
  rm -rf "$root/autograder/submission" "$root/autograder/results"
  mkdir -p "$root/autograder/submission" "$root/autograder/results"
  cp "$work/$kind" "$root/autograder/submission/$file"
  cgroup_fresh
  start=$SECONDS
  rc=0
  in_root "/autograder/run_autograder" >"$work/run-$kind.log" 2>&1 || rc=$?
  seconds=$((SECONDS - start))
  peak=$(cgroup_peak_mib)
  results=$root/autograder/results/results.json
  summary=$(python3 - "$results" "$kind" <<'PY'
import json, sys
path, kind = sys.argv[1:]
r = json.load(open(path))
tests = r["tests"]
total = sum(t["max_score"] for t in tests)
ok = (r["score"] * 4 <= total) if kind == "start" else (r["score"] == total)
print(json.dumps({"score": r["score"], "max_score": total, "as_expected": ok}))
print(f"   results.json: {r['output']}", file=sys.stderr)
for t in tests:
    first = (t["output"].strip().splitlines() or [""])[0]
    print(f"     {t['score']:>3} / {t['max_score']:<3} {t['status']:<6} {t['name']}", file=sys.stderr)
    print(f"                          {first[:110]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
) || { rc=${rc:-0}; [[ $rc -ne 0 ]] || rc=1; failed=1; }
  record "run_autograder on the $kind" "$seconds" "$rc" "$peak" "${summary:+\"results\": $summary}"
  [[ $rc -eq 0 ]] || { tail -20 "$work/run-$kind.log"; failed=1; }
done

{
  echo "{"
  echo "  \"exercise\": \"$id\", \"date\": \"$(date -u +%Y-%m-%d)\", \"commit\": \"$(git -C "$repo" rev-parse --short HEAD)\","
  echo "  \"root\": \"Debian 13 (trixie) debootstrap --variant=minbase, $([[ $namespaces == 1 ]] && echo "bound onto itself (namespaces allowed)" || echo "a plain chroot (no namespaces)")\", \"cpus\": $cpus, \"memory_mib\": $memory,"
  echo "  \"host\": \"$(nproc) CPUs, $(uname -m)\", \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\","
  echo "  \"steps\": ["
  ( IFS=$'\n'; sed '$!s/$/,/' <<<"${steps[*]}" | sed 's/^/    /' )
  echo "  ]"
  echo "}"
} >"$out"
cat "$out"
[[ $failed -eq 0 ]] && echo "gradescope-image-check $id: PASS" || echo "gradescope-image-check $id: FAIL"
exit "$failed"
