#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian package libpools-dev (cmake/package.cmake), made and used as a user would:
#  1. the libraries alone configured for /usr (static, PIC), built, and packed by `cpack -G DEB`;
#  2. the package inspected: its name, version (project()'s), Depends (Debian package names) and
#     files (headers, libraries, the CMake package under /usr/lib/<multiarch>/cmake/pools);
#  3. installed with apt-get (which fetches what Depends names) and used: examples/consumer
#     configured with find_package(pools) and no prefix path (the package's own /usr), built and
#     run; futures_only, configured with fmt, nlohmann-json and Boost unfindable, built and run, its
#     link line naming no third-party library and no library of pools. The package is removed at
#     the end, whatever happened.
# Step 3 changes the system, so it runs only as root inside a distro-check root
# (scripts/distro-check.sh sets POOLS_DISTRO_CHECK; `scripts/test.sh trixie` runs this there, in a
# minimal Debian 13), or anywhere with POOLS_DEB_INSTALL=1; elsewhere it is skipped (exit 77)
# after steps 1 and 2, saying so.
#
#   examples/consumer/check-deb.sh SOURCE_TREE      (CXX picks the compiler; KEEP=1 keeps the work dir)
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
installed=
cleanup() {
  if [[ -n $installed ]]; then dpkg -r libpools-dev >/dev/null 2>&1 || echo "check-deb: could not remove libpools-dev" >&2; fi
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
[[ -z ${KEEP:-} ]] || echo "work dir: $work"
fail() { echo "check-deb: $*" >&2; exit 1; }
step() { echo "== $*"; }
quiet() {  # runs a command, showing its output only when it fails
  "$@" >"$work/step.log" 2>&1 || { tail -40 "$work/step.log" >&2; fail "failed: $*"; }
}
version=$(sed -nE 's/^project\(pools VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$src/CMakeLists.txt")
[[ -n $version ]] || fail "no project(pools VERSION x.y.z) in $src/CMakeLists.txt"

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
[[ -z ${CXX:-} ]] || common+=(-DCMAKE_CXX_COMPILER="$CXX")
if command -v ccache >/dev/null; then common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

step "1. cpack -G DEB of the libraries (static, PIC, prefix /usr)"
quiet cmake -S "$src" -B "$work/build" "${common[@]}" -DPOOLS_BUILD_TESTS=OFF -DPOOLS_BUILD_BENCH=OFF \
  -DPOOLS_BUILD_SERVER=OFF -DPOOLS_BUILD_COURSE=OFF -DPOOLS_INSTALL=ON -DCMAKE_INSTALL_PREFIX=/usr \
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON
quiet cmake --build "$work/build"
(cd "$work/build" && quiet cpack -G DEB)
deb=$(find "$work/build" -maxdepth 1 -name "libpools-dev_${version}_*.deb" | head -1)
[[ -n $deb ]] || fail "cpack made no libpools-dev_${version}_<arch>.deb in $work/build"
echo "   $(basename "$deb"): $(du -k "$deb" | cut -f1) KiB"

step "2. what the package says and holds"
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == libpools-dev ]] || fail "Package is '$(field Package)', not libpools-dev"
[[ $(field Version) == "$version" ]] || fail "Version is '$(field Version)', not $version"
depends=$(field Depends)
for need in libboost-context-dev libboost-dev libfmt-dev; do
  [[ ", $depends, " == *", $need, "* ]] || fail "Depends ('$depends') does not name $need"
done
echo "   Depends: $depends"
contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for path in ./usr/include/pools/executor.hpp ./usr/include/pools/futures/thread_pool.hpp \
    ./usr/include/pools/coroutines/thread_pool.hpp; do
  grep -qxF "$path" <<<"$contents" || fail "the package has no $path"
done
for pattern in '/cmake/pools/poolsConfig\.cmake$' '/cmake/pools/poolsConfigVersion\.cmake$' '/libpools_coroutines\.a$' \
    '/libpools_fibers\.a$' '/libpools_reactor\.a$' '/libpools_tools\.a$' '/libpools_runtime\.a$'; do
  grep -Eq "^\./usr/lib/.*$pattern" <<<"$contents" || fail "the package has no /usr/lib/...$pattern"
done
! grep -q '/testing/' <<<"$contents" || fail "the package holds the tests' helpers (pools/testing/)"
echo "   headers, five static libraries and the CMake package pools under /usr"

if [[ $(id -u) -ne 0 || ( -z ${POOLS_DISTRO_CHECK:-} && -z ${POOLS_DEB_INSTALL:-} ) ]]; then
  echo "check-deb: step 3 skipped: installing the package needs root inside a distro-check root" \
       "(scripts/test.sh trixie runs it in Debian 13) or POOLS_DEB_INSTALL=1"
  exit 77
fi

step "3. apt-get install ./$(basename "$deb"), then examples/consumer against /usr"
if dpkg -s libpools-dev >/dev/null 2>&1; then
  # A distro-check root is kept between runs: a run killed before its clean-up left it there.
  [[ -n ${POOLS_DISTRO_CHECK:-} ]] || fail "libpools-dev is installed already: remove it first (dpkg -r libpools-dev)"
  echo "   removing the libpools-dev an earlier run left in this root"
  quiet dpkg -r libpools-dev
fi
installed=1
quiet env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb"
quiet cmake -S "$src/examples/consumer" -B "$work/consumer" "${common[@]}"
quiet cmake --build "$work/consumer"
"$work/consumer/consumer" || fail "the consumer built against the package gave a wrong answer"
grep -q '/usr/lib/.*/cmake/pools' "$work/consumer/CMakeCache.txt" || fail "the consumer did not find pools under /usr/lib"
quiet cmake -S "$src/examples/consumer" -B "$work/futures" "${common[@]}" -DFUTURES_ONLY=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON
cmake --build "$work/futures" -v >"$work/verbose.log" 2>&1 || { tail -40 "$work/verbose.log" >&2; fail "futures_only did not build"; }
line=$(grep -E -- '-o [^ ]*futures_only( |$)' "$work/verbose.log" | grep -v -- '-c ' | tail -1)
[[ -n $line ]] || fail "no link command for futures_only"
line=${line//"$work"/WORK}  # the random work dir's name must not look like a library
if grep -Eiq 'fmt|nlohmann|json|boost|libpools' <<<"$line"; then fail "futures_only's link line names a library: $line"; fi
"$work/futures/futures_only" >/dev/null || fail "futures_only built against the package gave a wrong answer"
echo "check-deb: libpools-dev $version installs in $(. /etc/os-release && echo "$PRETTY_NAME"); the consumer builds and runs against it; futures alone links no library"
