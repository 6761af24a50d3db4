#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the README's two commands as a new user would, in a minimal Debian root file system made
# with debootstrap (Debian's packages only), on a clean clone of the current commit. Prints each
# step's time and the verdict.
#
#   scripts/distro-check.sh trixie                      both commands: compare.sh, then test.sh
#   scripts/distro-check.sh bookworm test               only ./scripts/test.sh (all its presets)
#   scripts/distro-check.sh trixie test release clang   only ./scripts/test.sh release clang
#   scripts/distro-check.sh trixie compare              only ./scripts/compare.sh
#   scripts/distro-check.sh --fresh trixie ...          start again from the debootstrapped root:
#                                                       every package installed from nothing
#   scripts/distro-check.sh trixie format [FILE...]     clang-format -i with the root's clang-format
#                                                       (19) on this working tree's C++ files (all
#                                                       by default): the checked version, on a
#                                                       machine whose own clang-format is another
#
# Needs root, debootstrap (installed here if missing) and the Debian mirror. Everything it keeps
# lives under /var/cache/pools-distro-check/<release>/ (override: POOLS_DISTRO_CACHE), outside the
# repository:
#   base/    the debootstrapped root, made once and never changed
#   root/    a copy of base/ in which the README's commands have installed their packages; kept,
#            so the next run's bootstrap.sh finds them all ("warm"); --fresh copies base/ again
#   ccache/  the compiler cache, bind-mounted into root/ so a rebuild of a new clone is cheap
#   root/src the clean clone (`git clone` of this repository, checked out at HEAD: uncommitted
#            changes are not in it), replaced on every run
#
# Safety: /proc, /sys, /dev and ccache/ are mounted inside root/ only in a private mount namespace
# (unshare --mount): they exist while the chroot runs and vanish with its process, whatever way it
# ends. A recursive delete through a bound /dev would empty the machine's own /dev, so every
# delete here first checks (findmnt) that nothing is mounted at or below the path, and uses
# rm --one-file-system. Old roots are not deleted at all: --fresh moves root/ aside.
set -euo pipefail

usage() { sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

fresh=
if [[ ${1:-} == --fresh ]]; then fresh=1; shift; fi
release=${1:-}
[[ $release == bookworm || $release == trixie ]] || usage
shift
what=${1:-both}
case $what in
  both) [[ $# -le 1 ]] || usage ;;
  test | compare | format) shift ;;
  *) usage ;;
esac
args=("$@")  # test: passed on to scripts/test.sh (none: all of its presets); format: the files
[[ $what == test || $what == format || ${#args[@]} -eq 0 ]] || usage

[[ $(id -u) -eq 0 ]] || { echo "distro-check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$repo" rev-parse HEAD)
cache=${POOLS_DISTRO_CACHE:-/var/cache/pools-distro-check}/$release
mirror=http://deb.debian.org/debian
mkdir -p "$cache/ccache"
base=$cache/base root=$cache/root

# One run per release at a time: a second one would share root/ and its mounts.
exec 9>"$cache/lock"
flock -n 9 || { echo "distro-check: another run for $release holds $cache/lock" >&2; exit 2; }

step_names=() step_times=()
step() {  # step NAME COMMAND...: runs it, records its wall time
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== distro-check $release: $name"
  "$@" || rc=$?
  step_names+=("$name") step_times+=("$((SECONDS - start)) s$([[ $rc -eq 0 ]] || echo ", FAILED (exit $rc)")")
  echo "== distro-check $release: $name: ${step_times[-1]}"
  return $rc
}

# Refuses to delete a path with anything mounted at or below it (our binds live only in the
# namespace of a finished process, but a mount made by hand would be followed by rm).
safe_rm() {
  local path
  path=$(realpath -m "$1")
  [[ $path == "$cache"/* ]] || { echo "distro-check: refusing to delete $path (outside $cache)" >&2; return 1; }
  if findmnt -rn -o TARGET | awk -v p="$path" '$0 == p || index($0, p "/") == 1 { found = 1 } END { exit !found }'; then
    echo "distro-check: refusing to delete $path: something is mounted inside it (findmnt)" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$path"
}

make_base() {
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  local tmp=$cache/base.partial
  if [[ -e $tmp ]]; then mv "$tmp" "$cache/base.failed.$(date +%s)"; fi
  debootstrap --variant=minbase "$release" "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { tail -5 "$cache/debootstrap.log" >&2; return 1; }
  # The updates and security suites, as on an installed machine.
  cat >"$tmp/etc/apt/sources.list" <<EOF
deb $mirror $release main
deb $mirror $release-updates main
deb http://deb.debian.org/debian-security $release-security main
EOF
  # No service starts inside the root (nginx's package would start one on the host's port 80):
  # the standard chroot guard, read by invoke-rc.d.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod +x "$tmp/usr/sbin/policy-rc.d"
  mv "$tmp" "$base"
}

make_root() {
  if [[ -n $fresh && -e $root ]]; then mv "$root" "$cache/root.old.$(date +%s)"; fi
  if [[ ! -e $root ]]; then cp -a "$base" "$root.partial" && mv "$root.partial" "$root"; fi
  cp /etc/resolv.conf "$root/etc/resolv.conf"
}

clone() {
  if [[ -e $root/src ]]; then safe_rm "$root/src"; fi
  git clone --quiet --no-checkout "$(git -C "$repo" rev-parse --path-format=absolute --git-common-dir)" "$root/src"
  git -C "$root/src" checkout --quiet --detach "$commit"
  # The optional inputs Debian lacks, beside the checkout as on this machine (../shared/third_party:
  # stdexec's headers, BS::thread_pool's test program), so the root builds what this machine builds.
  if [[ -e $root/shared ]]; then safe_rm "$root/shared"; fi
  if [[ -d $repo/../shared/third_party ]]; then
    mkdir -p "$root/shared" && cp -a "$repo/../shared/third_party" "$root/shared/third_party"
  fi
}

# Runs a command in the root's /src as a login shell would, with /proc, /sys, /dev and the ccache
# bound in a private mount namespace: the mounts end with this process. With a second argument,
# that directory is bound on /src instead of the clone.
in_root() {
  local cmd=$1 src=${2:-}
  mkdir -p "$root/ccache" "$root/src"
  unshare --mount --propagation private -- /bin/bash -euc '
    root=$1 cache=$2 cmd=$3 src=$4 release=$5
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    mount --bind "$cache/ccache" "$root/ccache"
    if [[ -n $src ]]; then mount --bind "$src" "$root/src"; fi
    exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin CCACHE_DIR=/ccache \
      POOLS_DISTRO_CHECK="$release" POOLS_CTEST_EXCLUDE="$6" \
      /bin/bash -ec "cd /src && $cmd"
  ' distro-check "$root" "$cache" "$cmd" "$src" "$release" "${POOLS_CTEST_EXCLUDE:-}"
}

failed=
verdict="FAIL (stopped before the end)"  # until every step has run
report() {
  echo
  echo "distro-check $release, $(date -u '+%Y-%m-%d %H:%M UTC'), commit ${commit:0:7}:"
  local i
  for i in "${!step_names[@]}"; do printf '  %-40s %s\n' "${step_names[$i]}" "${step_times[$i]}"; done
  echo "verdict: $verdict"
}
trap report EXIT
trap 'exit 130' INT TERM

if [[ $what == format ]]; then
  trap - EXIT
  [[ -x $root/usr/bin/clang-format ]] ||
    { echo "distro-check: no clang-format in $root yet: run scripts/distro-check.sh $release test release" >&2; exit 2; }
  [[ ${#args[@]} -gt 0 ]] || mapfile -t args < <(git -C "$repo" ls-files '*.cpp' '*.hpp')
  in_root "clang-format --version && clang-format -i ${args[*]@Q}" "$repo"
  exit
fi
if [[ ! -e $base ]]; then
  step "debootstrap $release (minbase)" make_base || exit 1
else
  step "debootstrap $release: cached in $base" true
fi
step "root ready ($([[ -n $fresh || ! -e $root ]] && echo "fresh copy of base" || echo "kept from the last run"))" make_root ||
  exit 1
step "clean clone of ${commit:0:7}" clone || exit 1
if [[ $what == both || $what == compare ]]; then
  step "./scripts/compare.sh" in_root "./scripts/compare.sh" || failed=1
fi
if [[ $what == both || $what == test ]]; then
  step "./scripts/test.sh${args[*]:+ ${args[*]}}" in_root "./scripts/test.sh ${args[*]}" || failed=1
fi
if [[ -z $failed ]]; then verdict=PASS; else verdict=FAIL; exit 1; fi
