#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs the outside project examples/consumer (coroutines + futures) the three ways the
# README's "Use a pool in your project" shows, from the checkout as it is (no network):
#  1. install: the libraries alone configured, built and installed into a fresh prefix; the
#     consumer finds them with find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures);
#     a project loading every component runs a fibers and a reactor task from the installation;
#     a find_package() of an unknown component, and of a component the installation did not
#     build (a second, futures-only install), must fail with a message naming it; that second
#     install has POOLS_TRACE=ON, and a program built against it has the hooks compiled in;
#  2. add_subdirectory(<checkout>);
#  3. FetchContent_Declare(pools SOURCE_DIR <checkout>).
# In 2 and 3 pools is a subproject: only libraries may be defined (no tests_*, bench_*, server_*,
# exercise_* target), and doctest, oneTBB and OpenMP are made unfindable to show they are not needed.
#
#   scripts/check-consumer.sh SOURCE_TREE      (CXX picks the compiler; KEEP=1 keeps the work dir)
set -euo pipefail
src=$(cd "$1" && pwd)
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

run_consumer() {  # <build dir>: builds the consumer target and runs it
  quiet cmake --build "$1" --target consumer
  "$1/consumer" || fail "the consumer built in $1 gave a wrong answer"
}

step "1. install into a fresh prefix, then find_package(pools CONFIG REQUIRED COMPONENTS coroutines futures)"
quiet cmake -S "$src" -B "$work/pools" "${common[@]}" "${libraries_only[@]}"
quiet cmake --build "$work/pools"
quiet cmake --install "$work/pools" --prefix "$work/prefix"
[[ -f $work/prefix/lib/cmake/pools/poolsConfigVersion.cmake ]] || fail "no poolsConfigVersion.cmake installed"
quiet cmake -S "$src/examples/consumer" -B "$work/package" "${common[@]}" -DCMAKE_PREFIX_PATH="$work/prefix"
run_consumer "$work/package"

# Every component of the installation at once (find_package without COMPONENTS): fibers brings
# Boost.Context and reactor Boost's headers through their own find_dependency() lines.
mkdir -p "$work/all"
cat >"$work/all/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(every_component LANGUAGES CXX)
find_package(pools CONFIG REQUIRED)
add_executable(every_component main.cpp)
target_link_libraries(every_component PRIVATE pools::fibers pools::reactor)
CMAKE
cat >"$work/all/main.cpp" <<'CPP'
#include <pools/fibers/thread_pool.hpp>
#include <pools/reactor/executor.hpp>
int main() {
  pools::fibers::thread_pool fibers(2);
  auto answer = fibers.spawn([] { return 40; });
  int two = 0;
  {
    pools::reactor::per_thread_executor reactor(2);
    reactor.post([&two] { two = 2; });
  }  // the destructor drains: the task has run
  return answer.join() + two == 42 ? 0 : 1;
}
CPP
quiet cmake -S "$work/all" -B "$work/all-build" "${common[@]}" -DCMAKE_PREFIX_PATH="$work/prefix"
quiet cmake --build "$work/all-build"
"$work/all-build/every_component" || fail "fibers and reactor from the installation gave a wrong answer"

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
expect_refusal "$work/prefix" nosuch "component 'nosuch' is not a component of pools"
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
add_executable(traced main.cpp)
target_link_libraries(traced PRIVATE pools::futures)
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
quiet cmake -S "$work/traced" -B "$work/traced-build" "${common[@]}" -DCMAKE_PREFIX_PATH="$work/prefix-futures"
quiet cmake --build "$work/traced-build"
"$work/traced-build/traced" || fail "a task on the traced installation's futures pool gave a wrong answer"

subproject() {  # <way> <build dir>
  quiet cmake -S "$src/examples/consumer" -B "$2" "${common[@]}" "${not_needed[@]}" -DPOOLS_FROM="$1" \
    -DPOOLS_SOURCE_DIR="$src"
  local extra
  extra=$(cmake --build "$2" --target help | grep -Eo '^(tests|bench|server|exercise|conformance)_[A-Za-z0-9_]*' || true)
  [[ -z $extra ]] || fail "as a subproject ($1), pools defined more than its libraries: ${extra//$'\n'/ }"
  run_consumer "$2"
}
step "2. add_subdirectory(<checkout>)"
subproject subdirectory "$work/subdirectory"
step "3. FetchContent_Declare(pools SOURCE_DIR <checkout>)"
subproject fetchcontent "$work/fetchcontent"
echo "check-consumer: all three ways build and run"
