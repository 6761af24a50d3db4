# SPDX-License-Identifier: MIT
# The optional std::execution bridge (common/include/pools/execution.hpp, docs/std-execution.md).
#
# stdexec, NVIDIA's reference implementation of P2300, is header-only and not packaged by Debian.
# It is found, in this order:
#   1. -DPOOLS_STDEXEC_INCLUDE_DIR=<dir>  a folder holding stdexec/execution.hpp;
#   2. find_package(stdexec CONFIG)       an installed stdexec (its target STDEXEC::stdexec);
#   3. ../shared/third_party/stdexec/include beside this checkout (the snapshot CI builds with).
# With none of them, or with a compiler that cannot compile it (Clang 14 with Debian 12's libstdc++:
# no std::source_location), the bridge, its tests and the bench_stdexec_pool reference are left
# out with one message; nothing else in the tree needs stdexec.
#
# Defines: POOLS_HAVE_STDEXEC (ON/OFF) and, when ON, the INTERFACE target pools_execution
# (pools::execution): pools::common plus stdexec's headers.

set(POOLS_STDEXEC_INCLUDE_DIR "" CACHE PATH "Folder holding stdexec/execution.hpp (optional: std::execution bridge)")
set(POOLS_HAVE_STDEXEC OFF)

function(_pools_stdexec_locate out_dir out_target)
  set(${out_dir} "" PARENT_SCOPE)
  set(${out_target} "" PARENT_SCOPE)
  if(POOLS_STDEXEC_INCLUDE_DIR)
    if(NOT EXISTS ${POOLS_STDEXEC_INCLUDE_DIR}/stdexec/execution.hpp)
      message(FATAL_ERROR "POOLS_STDEXEC_INCLUDE_DIR is '${POOLS_STDEXEC_INCLUDE_DIR}', which has no "
                          "stdexec/execution.hpp: point it at stdexec's include/ folder, or leave it empty")
    endif()
    set(${out_dir} ${POOLS_STDEXEC_INCLUDE_DIR} PARENT_SCOPE)
    return()
  endif()
  find_package(stdexec CONFIG QUIET)
  if(TARGET STDEXEC::stdexec)
    set(${out_target} STDEXEC::stdexec PARENT_SCOPE)
    return()
  endif()
  get_filename_component(_beside ${PROJECT_SOURCE_DIR}/../shared/third_party/stdexec/include ABSOLUTE)
  if(EXISTS ${_beside}/stdexec/execution.hpp)
    set(${out_dir} ${_beside} PARENT_SCOPE)
  endif()
endfunction()

_pools_stdexec_locate(_pools_stdexec_dir _pools_stdexec_target)
if(NOT _pools_stdexec_dir AND NOT _pools_stdexec_target)
  message(STATUS "pools: stdexec not found (-DPOOLS_STDEXEC_INCLUDE_DIR=<stdexec>/include): "
                 "no std::execution bridge, its tests or bench_stdexec_pool")
  return()
endif()

# Can this compiler compile stdexec? One small program says (a few seconds, once per build tree).
if(_pools_stdexec_dir)
  set(_pools_stdexec_probe_flags "-DINCLUDE_DIRECTORIES=${_pools_stdexec_dir}"
                                 "-DCOMPILE_DEFINITIONS=-D_GLIBCXX_USE_TBB_PAR_BACKEND=0")
  set(_pools_stdexec_probe_libs "")
else()
  set(_pools_stdexec_probe_flags "-DCOMPILE_DEFINITIONS=-D_GLIBCXX_USE_TBB_PAR_BACKEND=0")
  set(_pools_stdexec_probe_libs LINK_LIBRARIES ${_pools_stdexec_target})
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/stdexec_probe/probe.cpp
     "#include <stdexec/execution.hpp>\n"
     "int main() {\n"
     "  auto [v] = stdexec::sync_wait(stdexec::just(20) | stdexec::then([](int x) { return x + 22; })).value();\n"
     "  return v == 42 ? 0 : 1;\n"
     "}\n")
try_compile(_pools_stdexec_compiles ${CMAKE_CURRENT_BINARY_DIR}/stdexec_probe
            SOURCES ${CMAKE_CURRENT_BINARY_DIR}/stdexec_probe/probe.cpp
            CMAKE_FLAGS ${_pools_stdexec_probe_flags}
            ${_pools_stdexec_probe_libs}
            CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
            OUTPUT_VARIABLE _pools_stdexec_probe_output)
if(NOT _pools_stdexec_compiles)
  message(DEBUG "${_pools_stdexec_probe_output}")
  message(STATUS "pools: stdexec found (${_pools_stdexec_dir}${_pools_stdexec_target}) but "
                 "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} cannot compile it: "
                 "no std::execution bridge, its tests or bench_stdexec_pool in this build")
  return()
endif()

add_library(pools_execution INTERFACE)
add_library(pools::execution ALIAS pools_execution)
target_link_libraries(pools_execution INTERFACE pools::common)
# stdexec includes <execution>, whose parallel algorithms libstdc++ builds on oneTBB whenever
# <tbb/tbb.h> is installed, so every unoptimised program would need -ltbb for functions it never
# calls. The bridge uses none of the parallel algorithms: libstdc++'s own switch turns that off.
target_compile_definitions(pools_execution INTERFACE _GLIBCXX_USE_TBB_PAR_BACKEND=0)
if(_pools_stdexec_dir)
  # SYSTEM: stdexec's own headers are not held to this project's -Werror.
  target_include_directories(pools_execution SYSTEM INTERFACE ${_pools_stdexec_dir})
else()
  target_link_libraries(pools_execution INTERFACE ${_pools_stdexec_target})
endif()
set(POOLS_HAVE_STDEXEC ON)
message(STATUS "pools: std::execution bridge on, stdexec from ${_pools_stdexec_dir}${_pools_stdexec_target}")
