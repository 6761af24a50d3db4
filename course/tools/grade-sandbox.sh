#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one grading step of a student's code isolated (docs/course/instructor.md, "Threat model").
#
#   course/tools/grade-sandbox.sh [--write DIR]... [--limits build|run] [--sanitized] [--ccache] -- COMMAND [ARG...]
#
# As root, COMMAND runs
#   - as the unprivileged system user pools-grader (created here when missing), with no
#     supplementary groups and no way to gain privileges (setpriv --no-new-privs);
#   - in private mount, network and PID namespaces (unshare): every mount read-only except the
#     --write folders (made pools-grader's) and a scratch folder of its own (TMPDIR, removed
#     after; a run's working folder), a fresh /dev/shm, its own /proc; no network (only a loopback that is down); it sees
#     no process outside;
#   - under limits (prlimit): CPU time, file size, open files, processes (threads) of the user, and
#     address space for a run that is not sanitized (--sanitized: AddressSanitizer and
#     ThreadSanitizer reserve terabytes of address space up front, so no address-space limit).
#     --limits build (the compiler: an hour of CPU, 1 GiB files) or run (the check: 20 min of
#     CPU, 64 MiB files, 4 GiB of address space).
# --ccache (a build): ccache's folder is /var/cache/pools-grader/ccache, pools-grader's own and
#     writable in this step only (the compiler writes it; the student's program never runs there).
# The step's build folder is a --write folder; the grader's scripts, the check's sources and the
# results writer are not: the student's code can read them (they are in the hand-out) but not
# change them. The result channel's pipe (course/tools/grade_run.py) is an inherited descriptor.
#
# Root, but namespaces cannot be made (a container without CAP_SYS_ADMIN): COMMAND runs as
# pools-grader with the limits, without the namespaces, after one line on stderr that says so
# (POOLS_GRADE_REQUIRE_ISOLATION=1: exit 3 instead).
# Not root: COMMAND runs with the limits only, as the calling user, after one line on stderr that
# says it is not isolated; with POOLS_GRADE_REQUIRE_ISOLATION=1 that is an error (exit 3) instead.
# Exit status: COMMAND's (a signal N as 128+N); 2 for a bad argument; 3 when isolation is required
# and impossible.
set -uo pipefail

usage() { echo "usage: course/tools/grade-sandbox.sh [--write DIR]... [--limits build|run] [--sanitized] -- COMMAND [ARG...]" >&2; exit 2; }
writable=()
limits=run
sanitized=0
ccache=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --write) [[ $# -ge 2 && -d $2 ]] || { echo "grade-sandbox.sh: --write needs an existing folder ('${2:-}')" >&2; exit 2; }
      writable+=("$(cd "$2" && pwd)"); shift 2 ;;
    --limits) [[ $# -ge 2 && $2 =~ ^(build|run)$ ]] || usage; limits=$2; shift 2 ;;
    --sanitized) sanitized=1; shift ;;
    --ccache) ccache=1; shift ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[[ $# -ge 1 ]] || usage

case $limits in
  build) rl=(--cpu=3600 --fsize=$((1 << 30)) --nofile=4096 --nproc=4096) ;;
  run) rl=(--cpu=1200 --fsize=$((64 << 20)) --nofile=1024 --nproc=4096)
    [[ $sanitized -eq 1 ]] || rl+=(--as=$((4 << 30))) ;;
esac

if [[ $(id -u) -ne 0 ]] || ! command -v unshare >/dev/null || ! command -v setpriv >/dev/null; then
  why="not root"
  [[ $(id -u) -eq 0 ]] && why="unshare or setpriv (util-linux) missing"
  if [[ ${POOLS_GRADE_REQUIRE_ISOLATION:-0} == 1 ]]; then
    echo "grade-sandbox.sh: cannot isolate the student's code ($why) and POOLS_GRADE_REQUIRE_ISOLATION=1" >&2
    exit 3
  fi
  echo "grade-sandbox.sh: NOT ISOLATED ($why): the student's code runs as $(id -un), with limits only" >&2
  exec prlimit "${rl[@]}" -- "$@"
fi

user=pools-grader
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user" 2>/dev/null ||
    id -u "$user" >/dev/null 2>&1 || { echo "grade-sandbox.sh: cannot create the user $user" >&2; exit 3; }
fi
if [[ $ccache -eq 1 ]]; then
  mkdir -p /var/cache/pools-grader/ccache && chown "$user:" /var/cache/pools-grader /var/cache/pools-grader/ccache
  writable+=(/var/cache/pools-grader/ccache)
  export CCACHE_DIR=/var/cache/pools-grader/ccache
fi
scratch=$(mktemp -d /tmp/pools-grader.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
for d in "${writable[@]}" "$scratch"; do chown -R "$user:" "$d"; done
# The folders above a --write folder must be passable for the user (a mktemp -d folder is 0700).
for d in "${writable[@]}"; do
  p=$d
  while [[ $p != / ]]; do p=$(dirname "$p"); [[ -x $p ]] && chmod o+x "$p" 2>/dev/null; done
done

# Inside the namespaces, as root still: the writable folders bound onto themselves (so that they
# are mounts of their own), then every other mount remounted read-only, a fresh /dev/shm; then the
# command as pools-grader, not exec'd (PID 1 ignores the signals it does not handle, so the student's
# code must not be PID 1: a crash must stay a crash).
# shellcheck disable=SC2016  # expanded by the inner shell
inner='
set -u

n=$1; shift
rw=("${@:1:$n}"); shift "$n"
for d in "${rw[@]}"; do mount --bind "$d" "$d" || exit 3; done
while read -r mp; do
  mp=$(printf "%b" "$mp")
  case $mp in /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;; esac
  skip=0
  for d in "${rw[@]}"; do [[ $mp == "$d" ]] && skip=1; done
  [[ $skip -eq 1 ]] || mount -o remount,bind,ro "$mp" 2>/dev/null || true
done < <(awk "{print \$5}" /proc/self/mountinfo | sort -u)
mount -t tmpfs -o size=64m,nosuid,nodev tmpfs /dev/shm 2>/dev/null || true
cd "$PWD" 2>/dev/null || true  # the working folder again, through the mounts made above
setpriv --reuid="$POOLS_GRADER_USER" --regid="$POOLS_GRADER_USER" --clear-groups --no-new-privs -- "$@" &
wait $!
'
export POOLS_GRADER_USER=$user TMPDIR=$scratch
# A run starts in the scratch folder: what the check writes beside it (07's trace) goes there.
[[ $limits == run ]] && cd "$scratch"
# Root without the right to make namespaces (a container without CAP_SYS_ADMIN, as Docker runs
# them by default; a chroot whose / is not a mount point): the student's code still runs as
# pools-grader under the limits, without the private namespaces, after a line that says so.
if ! probe=$(unshare --mount --net --pid --fork --kill-child --mount-proc --propagation private -- true 2>&1); then
  if [[ ${POOLS_GRADE_REQUIRE_ISOLATION:-0} == 1 ]]; then
    echo "grade-sandbox.sh: cannot make private namespaces ($probe) and POOLS_GRADE_REQUIRE_ISOLATION=1" >&2
    exit 3
  fi
  echo "grade-sandbox.sh: PARTLY ISOLATED (no private namespaces: $probe): the student's code runs as $user, with limits only" >&2
  prlimit "${rl[@]}" -- setpriv --reuid="$user" --regid="$user" --clear-groups --no-new-privs -- "$@" &
  wait $!
  exit
fi
unshare --mount --net --pid --fork --kill-child --mount-proc --propagation private -- \
  prlimit "${rl[@]}" -- bash -c "$inner" grade-sandbox "$((${#writable[@]} + 1))" "${writable[@]}" "$scratch" "$@"
