#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets up, builds and runs every test: the README's second command, and what CI runs.
#
#   scripts/test.sh                 release, clang, asan, tsan, handout, fuzz, portable, trixie,
#                                   arm64: CI's run (inside a distro-check root: the first seven)
#   scripts/test.sh release tsan    only these presets
#
# Each preset is configured with -Werror (warnings are errors on GCC and Clang), built, and its
# whole ctest suite run: unit tests, the conformance suite for every registered executor, bench
# smoke tests, Relacy model checks, server tests. Formatting is checked first; after the clang
# preset's build, clang-tidy checks every translation unit (scripts/tidy.sh, .clang-tidy). The
# clang preset also records scheduler events (-DPOOLS_TRACE=ON): its trace_* tests run every
# bench and server with --trace and check the files (tests/trace-run.py); the other presets
# build the default, hook-free code.
# "handout" is a futures-only course hand-out configured as if oneTBB, OpenMP, Boost.Context and
# Boost.Fiber were not installed (CMAKE_DISABLE_FIND_PACKAGE_*, CMakePresets.json): it proves a
# hand-out needs only what its variant needs. CMake notes that the Boost.Context switch went
# unused: nothing in a futures-only configuration looks for Boost.Context, which is the point.
# "fuzz" builds the libFuzzer targets of the server core with Clang, ASan and UBSan, replays their
# seed corpora and fuzzes each for 60 s (server/README.md, "Fuzzing").
# "arm64" cross-compiles for Linux arm64 (cmake/toolchain-arm64.cmake) and runs the tests under
# qemu-aarch64: every variant's unit tests, the conformance suites, the server's tests and e2e
# suites, the course's exercises (start and solution), with stress loops scaled down as under the
# sanitizers; no bench or Relacy models
# (docs/reliability.md, "Platforms"). "portable" builds the whole tree on the portable paths only
# (-DPOOLS_PORTABLE=ON: no futex, epoll, eventfd; what macOS and the BSDs build) and runs its tests.
# "trixie" runs this script again inside a minimal Debian 13 root (scripts/distro-check.sh: GCC 14,
# clang-format 19, Boost 1.83, oneTBB 2022, CMake 3.31), on a clean clone of the committed HEAD,
# with the presets in POOLS_TRIXIE_PRESETS (default "release"; "release clang" adds Clang 19 and
# clang-tidy 19). It needs root (skipped, saying so, without it) and Debian's mirror; the root and
# a ccache stay in /var/cache/pools-distro-check/trixie (POOLS_DISTRO_CACHE moves them), so a
# second run rebuilds little.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache (used by the build when installed) keys its cache on paths relative to CCACHE_BASEDIR,
# so a fresh clone in another folder reuses what an earlier build compiled. With the optional
# inputs beside the checkout (../shared/third_party: cmake/stdexec.cmake), the base is the folder
# holding both, so stdexec's headers are named relatively too.
if [[ -d ../shared/third_party ]]; then export CCACHE_BASEDIR="$(dirname "$PWD")"; else export CCACHE_BASEDIR="$PWD"; fi
export CCACHE_NOHASHDIR=1

all_presets=(release clang asan tsan handout fuzz portable arm64 trixie)
# The default run, and CI's: every preset. trixie (Debian 13: GCC 14, Boost 1.83, oneTBB 2022)
# and arm64 come last: they leave this machine's toolchain. CI's budget is 60 minutes on 2 cores;
# what each step costs is measured in docs/reliability.md ("CI: its steps and their cost").
default_presets=(release clang asan tsan handout fuzz portable trixie arm64)
# Inside a distro-check root (scripts/distro-check.sh sets POOLS_DISTRO_CHECK) the README's
# command proves that distribution's compilers and libraries: every preset but the nested root
# (trixie) and the cross build (arm64).
if [[ -n ${POOLS_DISTRO_CHECK:-} ]]; then default_presets=(release clang asan tsan handout fuzz portable); fi
presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=("${default_presets[@]}")
for p in "${presets[@]}"; do
  [[ " ${all_presets[*]} " == *" $p "* ]] || { echo "test.sh: unknown preset '$p' (known: ${all_presets[*]})" >&2; exit 2; }
  [[ $p != trixie || -z ${POOLS_DISTRO_CHECK:-} ]] ||
    { echo "test.sh: preset trixie runs on the host, not inside a distro-check root" >&2; exit 2; }
done

scripts/bootstrap.sh
# The arm64 cross toolchain, multiarch libraries and qemu-user: only when that preset runs.
if [[ " ${presets[*]} " == *" arm64 "* ]]; then scripts/bootstrap.sh arm64; fi

# The tree is formatted with one stated clang-format: 19. clang-format 14 (Debian 12's default)
# lays C++20 requires-clauses and a few other constructs out differently whatever the options, so
# the check uses clang-format-19, which both Debian 12 and Debian 13 ship (bootstrap.sh installs
# it). Format a file the same way: clang-format-19 -i FILE.
format_tool=clang-format-19
command -v "$format_tool" >/dev/null || { echo "test.sh: $format_tool is missing (scripts/bootstrap.sh installs it)" >&2; exit 1; }
echo "== format check (.clang-format, $("$format_tool" --version))"
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find common variants server bench -name '*.[ch]pp')
if [[ ${#sources[@]} -gt 0 ]]; then
  "$format_tool" --dry-run --Werror "${sources[@]}"
fi

[[ " ${presets[*]} " == *" clang "* ]] || echo "== clang-tidy: skipped (it runs with the clang preset)"

jobs=$(nproc)
run_start=$SECONDS
load_at_start=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
# The compiler cache's counters at the start: the record says how warm it was (hits and misses of
# this machine's ccache over the run; the trixie root has its own).
ccache_at_start=$(ccache --print-stats 2>/dev/null | tr '\t' '=' | tr '\n' ' ' || true)
steps=$(mktemp)  # one line a preset: preset tests passed failed seconds build_s tidy_s ctest_s
trap 'rm -f "$steps"' EXIT
# write_record: the record POOLS_TEST_RECORD names (nothing without it). The machine line is the
# benchmarks' own (bench/compare.py, machine()), so every record names a machine the same way.
write_record() {
  [[ -n ${POOLS_TEST_RECORD:-} ]] || return 0
  local ccache_now
  ccache_now=$(ccache --print-stats 2>/dev/null | tr '\t' '=' | tr '\n' ' ' || true)
  python3 - "$POOLS_TEST_RECORD" "$steps" "$((SECONDS - run_start))" "$load_at_start" "$*" "$ccache_at_start" "$ccache_now" <<'PYTHON'
import datetime, importlib.util, json, os, platform, subprocess, sys
out, steps, total_s, load, presets = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
counters = [dict(kv.split("=", 1) for kv in arg.split() if "=" in kv) for arg in sys.argv[6:8]]
delta = lambda k: int(counters[1].get(k, 0)) - int(counters[0].get(k, 0))
cache = {"hits": delta("direct_cache_hit") + delta("preprocessed_cache_hit"), "misses": delta("cache_miss")}
sys.path.insert(0, "bench")  # compare.py imports its neighbours
spec = importlib.util.spec_from_file_location("compare", os.path.join("bench", "compare.py"))
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
commit = git("rev-parse", "--short", "HEAD") + (" + uncommitted changes" if git("status", "--porcelain", "--untracked-files=no") else "")
rows, values = [], {}
for line in open(steps):
    preset, tests, passed, failed, s, build_s, tidy_s, ctest_s = line.split()
    values[preset] = {"tests": int(tests), "passed": int(passed), "failed": int(failed), "s": int(s),
                      "build_s": int(build_s), "tidy_s": int(tidy_s), "ctest_s": int(ctest_s)}
    split = "—" if preset == "trixie" else f"{build_s} s + " + (f"{tidy_s} s + " if preset == "clang" else "") + f"{ctest_s} s"
    rows.append([preset, int(tests), split, f"{s} s"])
passed = sum(v["passed"] for v in values.values())
failed = sum(v["failed"] for v in values.values())
rows.append(["**all of `./scripts/test.sh`**", f"**{passed} passed, {failed} failed**", "", f"**{total_s} s ({total_s / 60:.1f} min)**"])
record = {
    "title": "./scripts/test.sh, step by step",
    "command": "./scripts/test.sh" + (f" {presets}" if presets else ""),
    "commit": commit,
    "date": datetime.date.today().isoformat(),
    "machine": compare.machine(cpu),
    "load_average": load,
    "compiler_cache": cache,
    "values": {"total_s": total_s, "total_min": round(total_s / 60, 1), "passed": passed, "failed": failed,
               "presets": values},
    "tables": {"steps": {"columns": ["step", "tests", "configure and build + clang-tidy + ctest", "wall time"],
                         "rows": rows}},
}
with open(out, "w") as f:
    json.dump(record, f, indent=2, ensure_ascii=False)
    f.write("\n")
print(f"test.sh: the run's record: {out}")
PYTHON
}
total_passed=0
total_failed=0
for preset in "${presets[@]}"; do
  if [[ $preset == trixie && $(id -u) -ne 0 ]]; then
    echo "== preset trixie: skipped: it needs root (debootstrap, chroot, mounts)"
    continue
  fi
  start=$SECONDS
  log=$(mktemp)
  if [[ $preset == trixie ]]; then
    read -ra inner <<<"${POOLS_TRIXIE_PRESETS:-release}"
    echo "== preset trixie: this script's ${inner[*]} in a Debian 13 root (scripts/distro-check.sh)"
    set +e
    # The classroom scripts' tests (ctest -L classroom: hand-out, class grading, Gradescope zips)
    # copy and rebuild the tree several times; they prove scripts, not the distribution, and run
    # in this machine's release preset already.
    POOLS_CTEST_EXCLUDE=${POOLS_CTEST_EXCLUDE:-classroom} scripts/distro-check.sh trixie test "${inner[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    # The inner run's closing line: "total: N passed, M failed".
    summary=$(grep -E '^total: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1 || true)
    rm -f "$log"
    [[ -n "$summary" ]] || { echo "test.sh: preset trixie ran no tests (exit $rc)" >&2; exit 1; }
    failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$summary")
    count=$(($(sed -E 's/^total: ([0-9]+) passed.*/\1/' <<<"$summary") + failed))
  else
    echo "== preset $preset: configure, build, test"
    cmake --preset "$preset" -DPOOLS_WERROR=ON -DPOOLS_REQUIRE_MODEL_CHECKS=ON >/dev/null
    cmake --build --preset "$preset" -j "$jobs"
    build_s=$((SECONDS - start))
    if [[ $preset == clang ]]; then
      echo "== clang-tidy over the clang preset's translation units"
      scripts/tidy.sh build-clang
    fi
    tidy_s=$((SECONDS - start - build_s))
    set +e
    # POOLS_CTEST_EXCLUDE: a label regex left out (the trixie step sets it for its inner run).
    ctest --preset "$preset" -j "$jobs" ${POOLS_CTEST_EXCLUDE:+-LE "$POOLS_CTEST_EXCLUDE"} 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
    rm -f "$log"
    if [[ -z "$summary" ]]; then
      echo "test.sh: preset $preset ran no tests (ctest exit $rc)" >&2
      exit 1
    fi
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
    count=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$summary")
  fi
  [[ $preset == trixie ]] && build_s=0 tidy_s=0
  echo "$preset $count $((count - failed)) $failed $((SECONDS - start)) $build_s $tidy_s $((SECONDS - start - build_s - tidy_s))" >>"$steps"
  total_passed=$((total_passed + count - failed))
  total_failed=$((total_failed + failed))
  echo "== preset $preset: $((count - failed)) passed, $failed failed in $((SECONDS - start)) s"
  if [[ $rc -ne 0 ]]; then
    echo "total: $total_passed passed, $total_failed failed"
    write_record "$@"
    exit 1
  fi
done
echo "total: $total_passed passed, $total_failed failed"
write_record "$@"
