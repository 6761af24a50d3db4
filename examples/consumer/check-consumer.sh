#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs the outside project examples/consumer the three ways docs/using-the-library.md
# shows, from the checkout as it is (no network), once with static and once with shared libraries
# (BUILD_SHARED_LIBS; the static ones with CMAKE_POSITION_INDEPENDENT_CODE=ON):
#  1. install: the libraries alone configured, built and installed into a fresh prefix; the
#     consumer finds them with find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures);
#     a project loading every component runs a fibers and a reactor task from the installation
#     (and, static, links the pools into a shared library of its own: PIC);
#  2. add_subdirectory(<checkout>);
#  3. FetchContent_Declare(pools SOURCE_DIR <checkout>).
# In each way, futures_only (FUTURES_ONLY=ON: pools::futures alone) is configured with fmt,
# nlohmann-json and Boost made unfindable and must build and run, and its link command line (read
# from `cmake --build -v`) must name no fmt, nlohmann-json or Boost library and no library of
# pools: the futures pool is header-only. In 2 and 3 pools is a subproject: only libraries may be
# defined (no tests_*, bench_*, server_*, exercise_* target), `all` builds no program of pools
# (sim_*), nothing of pools is written into the consumer's build folder, and doctest, oneTBB and
# OpenMP are made unfindable to show they are not needed. Shared: each library's SONAME is
# libpools_<x>.so.<major>.<minor> and the consumer loads the shared libraries.
# Once (static): a find_package() of an unknown component, and of a component the installation
# did not build (a second, futures-only install), must fail with a message naming it; that second
# install has POOLS_TRACE=ON, and a program built against it has the hooks compiled in (and links
# pools::runtime, still no third-party library).
#
#   examples/consumer/check-consumer.sh SOURCE_TREE [static|shared]...  (default: both; CXX picks the
#                                                             compiler; KEEP=1 keeps the work dir)
set -euo pipefail
src=$(cd "$1" && pwd)
shift
kinds=("$@")
[[ ${#kinds[@]} -gt 0 ]] || kinds=(static shared)
for k in "${kinds[@]}"; do
  [[ $k == static || $k == shared ]] || { echo "check-consumer: '$k' is not static or shared" >&2; exit 2; }
done
version=$(sed -nE 's/^project\(pools VERSION ([0-9]+\.[0-9]+)\.[0-9]+.*/\1/p' "$src/CMakeLists.txt")
[[ -n $version ]] || { echo "check-consumer: no project(pools VERSION x.y.z) in $src/CMakeLists.txt" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -z ${KEEP:-} ]] || { trap - EXIT; echo "work dir: $work"; }
fail() { echo "check-consumer: $*" >&2; exit 1; }
step() { echo "== $*"; }
quiet() {  # runs a command, showing its output only when it fails
  "$@" >"$work/step.log" 2>&1 || { tail -40 "$work/step.log" >&2; fail "failed: $*"; }
}

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
[[ -z ${CXX:-} ]] || common+=(-DCMAKE_CXX_COMPILER="$CXX")
if command -v ccache >/dev/null; then common+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
libraries_only=(-DPOOLS_BUILD_TESTS=OFF -DPOOLS_BUILD_BENCH=OFF -DPOOLS_BUILD_SERVER=OFF -DPOOLS_BUILD_COURSE=OFF)
not_needed=(-DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON -DCMAKE_DISABLE_FIND_PACKAGE_TBB=ON
            -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON)

no_deps=(-DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON
         -DCMAKE_DISABLE_FIND_PACKAGE_Boost=ON)

run_consumer() {  # <build dir>: builds everything (the consumer's `all`) and runs the consumer
  quiet cmake --build "$1"
  "$1/consumer" || fail "the consumer built in $1 gave a wrong answer"
}

# <build dir> <what may appear>: builds futures_only verbosely, checks its link line, runs it.
# <what may appear>: a regex of pools libraries allowed on the line ('' = none at all).
futures_only() {
  local dir=$1 allowed=$2 line
  cmake --build "$dir" --target futures_only -v >"$work/verbose.log" 2>&1 ||
    { tail -40 "$work/verbose.log" >&2; fail "futures_only did not build in $dir"; }
  line=$(grep -E -- '-o [^ ]*futures_only( |$)' "$work/verbose.log" | grep -v -- '-c ' | tail -1)
  [[ -n $line ]] || { cat "$work/verbose.log" >&2; fail "no link command for futures_only in $dir"; }
  line=${line//"$work"/WORK}  # the random work dir's name must not look like a library
  if grep -Eiq 'fmt|nlohmann|json|boost' <<<"$line"; then
    fail "futures_only's link line names a third-party library: $line"
  fi
  local pools_libs
  pools_libs=$(grep -Eo 'libpools_[a-z_]+' <<<"$line" | sort -u | paste -sd' ' || true)
  if [[ -n $pools_libs && ( -z $allowed || -n $(tr ' ' '\n' <<<"$pools_libs" | grep -Ev "^($allowed)$" || true) ) ]]; then
    fail "futures_only's link line names $pools_libs (allowed: ${allowed:-none}): $line"
  fi
  "$dir/futures_only" >/dev/null || fail "futures_only built in $dir gave a wrong answer"
  echo "   futures_only links ${pools_libs:-no library of pools}; no fmt, nlohmann-json or Boost"
}

# <build dir>: the consumer loads shared libraries of pools, each with the SONAME of this version.
check_shared() {
  local loaded
  loaded=$(ldd "$1/consumer" | grep -Eo 'libpools_[a-z_]+\.so[.0-9]*' | sort -u | tr '\n' ' ')
  [[ $loaded == *"libpools_coroutines.so.$version"* ]] ||
    fail "the consumer in $1 does not load libpools_coroutines.so.$version (loads: ${loaded:-none})"
  echo "   the consumer loads $loaded"
}

subproject() {  # <way> <build dir> <kind>
  local dir=$2 kind=$3 shared=OFF
  [[ $kind == static ]] || shared=ON
  quiet cmake -S "$src/examples/consumer" -B "$dir" "${common[@]}" "${not_needed[@]}" -DPOOLS_FROM="$1" \
    -DPOOLS_SOURCE_DIR="$src" -DBUILD_SHARED_LIBS=$shared
  local extra
  extra=$(cmake --build "$dir" --target help | grep -Eo '^(tests|bench|server|exercise|conformance)_[A-Za-z0-9_]*' || true)
  [[ -z $extra ]] || fail "as a subproject ($1), pools defined more than its libraries: ${extra//$'\n'/ }"
  # pools writes into its own binary dir only (pools/ or _deps/pools-build/), never the consumer's.
  local written
  written=$(find "$dir" -maxdepth 1 \( -name 'pools_*' -o -name 'pools-*' -o -name generated \) || true)
  [[ -z $written ]] || fail "as a subproject ($1), pools wrote into the consumer's build folder: $written"
  run_consumer "$dir"
  local programs
  programs=$(find "$dir" -type f -perm -u+x ! -name '*.so*' ! -path '*/CMakeFiles/*' \
    ! -name consumer ! -name futures_only | grep -v '\.sh$' || true)
  [[ -z $programs ]] || fail "as a subproject ($1), \`all\` built programs of pools: ${programs//$'\n'/ }"
  [[ $kind == static ]] || check_shared "$dir"
  # futures alone, without POOLS_VARIANTS, with no fmt, nlohmann-json or Boost to find: the
  # variants that need them are skipped, saying so.
  quiet cmake -S "$src/examples/consumer" -B "$dir-futures" "${common[@]}" "${not_needed[@]}" "${no_deps[@]}" \
    -DPOOLS_FROM="$1" -DPOOLS_SOURCE_DIR="$src" -DBUILD_SHARED_LIBS=$shared -DFUTURES_ONLY=ON
  grep -q "pools: variant 'fibers' skipped" "$work/step.log" ||
    fail "as a subproject without Boost ($1), the configuration does not say fibers was skipped"
  futures_only "$dir-futures" ''
}

for kind in "${kinds[@]}"; do
  if [[ $kind == static ]]; then link=(-DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON); else link=(-DBUILD_SHARED_LIBS=ON); fi
  step "1. ($kind) install into a fresh prefix, then find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures)"
  quiet cmake -S "$src" -B "$work/pools-$kind" "${common[@]}" "${libraries_only[@]}" "${link[@]}"
  quiet cmake --build "$work/pools-$kind"
  prefix=$work/prefix-$kind
  quiet cmake --install "$work/pools-$kind" --prefix "$prefix"
  [[ -f $prefix/lib/cmake/pools/poolsConfigVersion.cmake ]] || fail "no poolsConfigVersion.cmake installed"
  if [[ $kind == shared ]]; then
    soname=$(readelf -d "$prefix/lib/libpools_coroutines.so" | grep -Eo 'SONAME.*\[[^]]*\]' | grep -Eo '\[.*\]' || true)
    [[ $soname == "[libpools_coroutines.so.$version]" ]] ||
      fail "installed libpools_coroutines.so has SONAME '$soname', not [libpools_coroutines.so.$version]"
    echo "   libpools_coroutines.so: SONAME $soname"
  else
    [[ -f $prefix/lib/libpools_coroutines.a && ! -e $prefix/lib/libpools_coroutines.so ]] ||
      fail "a static installation must have libpools_coroutines.a and no .so"
  fi
  quiet cmake -S "$src/examples/consumer" -B "$work/package-$kind" "${common[@]}" -DCMAKE_PREFIX_PATH="$prefix"
  run_consumer "$work/package-$kind"
  [[ $kind == static ]] || check_shared "$work/package-$kind"
  quiet cmake -S "$src/examples/consumer" -B "$work/package-$kind-futures" "${common[@]}" "${no_deps[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DFUTURES_ONLY=ON
  futures_only "$work/package-$kind-futures" ''

  # Every component of the installation at once (find_package without COMPONENTS): fibers brings
  # Boost.Context and reactor Boost's headers through their own find_dependency() lines. Static:
  # a shared library of the consumer's own links the pools too, which needs them built as PIC.
  mkdir -p "$work/all"
  cat >"$work/all/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(every_component LANGUAGES CXX)
find_package(pools CONFIG REQUIRED)
add_library(plugin SHARED plugin.cpp)
target_link_libraries(plugin PRIVATE pools::coroutines)
add_executable(every_component main.cpp)
target_link_libraries(every_component PRIVATE pools::fibers pools::reactor plugin)
CMAKE
  cat >"$work/all/plugin.cpp" <<'CPP'
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/sync_wait.hpp>
pools::coroutines::task<int> one() { co_return 1; }
int plugin_one() {
  pools::coroutines::thread_pool pool(1);
  return pools::coroutines::sync_wait(pool, one());
}
CPP
  cat >"$work/all/main.cpp" <<'CPP'
#include <pools/fibers/thread_pool.hpp>
#include <pools/reactor/executor.hpp>
int plugin_one();
int main() {
  pools::fibers::thread_pool fibers(2);
  auto answer = fibers.spawn([] { return 40; });
  int two = 0;
  {
    pools::reactor::per_thread_executor reactor(2);
    reactor.post([&two] { two = 1; });
  }  // the destructor drains: the task has run
  return answer.join() + two + plugin_one() == 42 ? 0 : 1;
}
CPP
  quiet cmake -S "$work/all" -B "$work/all-$kind" "${common[@]}" -DCMAKE_PREFIX_PATH="$prefix"
  quiet cmake --build "$work/all-$kind"
  "$work/all-$kind/every_component" || fail "fibers, reactor and coroutines (in a shared library) from the installation gave a wrong answer"

  step "2. ($kind) add_subdirectory(<checkout>)"
  subproject subdirectory "$work/subdirectory-$kind" "$kind"
  step "3. ($kind) FetchContent_Declare(pools SOURCE_DIR <checkout>)"
  subproject fetchcontent "$work/fetchcontent-$kind" "$kind"
done

step "find_package() refuses what an installation does not have; a traced installation's users trace"
# A project that asks for components, to see find_package() refuse the wrong ones.
mkdir -p "$work/ask"
cat >"$work/ask/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(ask LANGUAGES CXX)
find_package(pools CONFIG REQUIRED COMPONENTS ${ASK})
CMAKE
expect_refusal() {  # <prefix> <component> <regex the message must match>
  # "${common[@]}": Ninja, as every tree here; CMake's default generator needs make, which a
  # machine set up by scripts/bootstrap.sh alone (a minimal Debian root) does not have.
  if cmake -S "$work/ask" -B "$work/ask-build-$2" "${common[@]}" -DCMAKE_PREFIX_PATH="$1" \
      -DASK="futures;$2" >"$work/ask.log" 2>&1; then
    fail "find_package(pools COMPONENTS futures $2) succeeded; it must fail"
  fi
  grep -Eq "$3" "$work/ask.log" || { cat "$work/ask.log" >&2; fail "the refusal of '$2' does not say '$3'"; }
  echo "   refused, as it must: $(grep -Eo "pools: component '$2'[^;]*" "$work/ask.log" | head -1)"
}
expect_refusal "$work/prefix-${kinds[0]}" nosuch "component 'nosuch' is not a component of pools"
# The second installation: futures only, and with scheduler tracing, which must reach its users
# (pools::common's compile definition; the package's pools_TRACE).
quiet cmake -S "$src" -B "$work/pools-futures" "${common[@]}" "${libraries_only[@]}" -DPOOLS_VARIANTS=futures \
  -DPOOLS_TRACE=ON
quiet cmake --build "$work/pools-futures"
quiet cmake --install "$work/pools-futures" --prefix "$work/prefix-futures"
expect_refusal "$work/prefix-futures" fibers "component 'fibers' was not built in this installation"
mkdir -p "$work/traced"
cat >"$work/traced/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(traced LANGUAGES CXX)
find_package(pools CONFIG REQUIRED COMPONENTS futures)
if(NOT pools_TRACE)
  message(FATAL_ERROR "an installation configured with POOLS_TRACE=ON says pools_TRACE='${pools_TRACE}'")
endif()
add_executable(futures_only main.cpp)
target_link_libraries(futures_only PRIVATE pools::futures)
CMAKE
cat >"$work/traced/main.cpp" <<'CPP'
#include <pools/futures/thread_pool.hpp>
#include <pools/trace.hpp>
static_assert(pools::trace::compiled_in, "the installation records events: its users must compile the hooks in");
int main() {
  pools::futures::thread_pool pool(2);
  return pool.submit_task([] { return 42; }).get() == 42 ? 0 : 1;
}
CPP
quiet cmake -S "$work/traced" -B "$work/traced-build" "${common[@]}" "${no_deps[@]}" -DCMAKE_PREFIX_PATH="$work/prefix-futures"
futures_only "$work/traced-build" libpools_runtime
echo "check-consumer: all three ways build and run (${kinds[*]}); futures alone links no third-party library"
