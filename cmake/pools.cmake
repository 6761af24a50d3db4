# SPDX-License-Identifier: MIT
# pools.cmake — project-wide compile settings and the variant registration helper.
#
# A variant is one folder under variants/ whose CMakeLists.txt calls pools_add_variant().
# That single call is the whole registration: the conformance suite, the bench and the server
# pick the variant up from it by naming convention, so copying a variant folder and renaming the
# call is enough to add a variant (docs/architecture.md, "How to add a variant").

# --- warnings, applied to every target the project defines -------------------------------
add_library(pools_warnings INTERFACE)
target_compile_options(pools_warnings INTERFACE -Wall -Wextra -Wpedantic $<$<BOOL:${POOLS_WERROR}>:-Werror>)

# --- sanitizers: global, so that every TU (tests, libraries, drivers) agrees ---------------
if(POOLS_SANITIZER STREQUAL "address")
  # Every UBSan check but vptr. The vptr check (is this object's dynamic type what the call says?)
  # looks up the vtable through the sanitizer runtime's IsAccessibleMemoryRange, which writes the
  # bytes into a pipe() it opens for the purpose (GCC 12's and 14's libubsan, Clang 14's and 19's
  # runtimes). A process out of descriptors — which the fault tests make every server be, on
  # purpose — gets no pipe, and each vptr check that misses UBSan's cache then reports "object has
  # invalid vptr" for a valid object and aborts: server_e2e_fibers' out-of-descriptors case died so
  # about once in 25–70 runs. common/tests/sanitizer_descriptors_test.cpp fails with the check on.
  # The fuzz build (server/fuzz/) keeps vptr on for the request core: nothing there runs out.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(POOLS_ASAN=1)
elseif(POOLS_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  # GCC warns (-Wtsan) at every std::atomic_thread_fence because TSan does not model fences.
  # The lock-free code keeps its fences (Relacy checks them); under -Werror the warning must go.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
  add_link_options(-fsanitize=thread)
  add_compile_definitions(POOLS_TSAN=1)
elseif(NOT POOLS_SANITIZER STREQUAL "")
  message(FATAL_ERROR "POOLS_SANITIZER must be '', 'address' or 'thread', not '${POOLS_SANITIZER}'")
endif()

# Sanitized builds run slower; tests read this to scale stress loops (never to skip them). So do
# tests run under an emulator (a cross build, CMAKE_CROSSCOMPILING_EMULATOR: the arm64 preset).
if(POOLS_SANITIZER STREQUAL "thread")
  set(POOLS_TEST_ENV "POOLS_SANITIZED=1;TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=${CMAKE_CURRENT_LIST_DIR}/tsan.supp")
elseif(POOLS_SANITIZER OR CMAKE_CROSSCOMPILING_EMULATOR)
  set(POOLS_TEST_ENV "POOLS_SANITIZED=1")
else()
  set(POOLS_TEST_ENV "POOLS_SANITIZED=0")
endif()
# ctest runs a test's own executable through the emulator, but a test that starts another program
# of the build (server_e2e starts server_<name>) must do so itself: POOLS_TEST_EMULATOR holds the
# emulator's command line, words separated by spaces (empty: run the program directly). Not relying
# on binfmt_misc, which a container or CI machine may not have registered.
if(CMAKE_CROSSCOMPILING_EMULATOR)
  list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " _emulator)
  list(APPEND POOLS_TEST_ENV "POOLS_TEST_EMULATOR=${_emulator}")
endif()

set_property(GLOBAL PROPERTY POOLS_REGISTERED_VARIANTS "")
set(POOLS_ROOT ${CMAKE_CURRENT_LIST_DIR}/.. CACHE INTERNAL "pools source root")

# pools_library_properties(<target>): what every compiled library of pools gets. add_library()
# without STATIC or SHARED follows BUILD_SHARED_LIBS, and CMAKE_POSITION_INDEPENDENT_CODE sets PIC,
# as for any CMake project. A shared library is named libpools_<x>.so.<version> with the SONAME
# libpools_<x>.so.<major>.<minor> while the major version is 0 (docs/using-the-library.md, "Versions":
# a 0.x minor release may change the ABI, a patch release may not), and finds its sibling libraries
# in its own folder wherever the installation is moved ($ORIGIN). Symbols keep the default
# visibility: the libraries' out-of-line functions are their API, and the one piece of state that
# must be unique per process in a header (the unhandled-exception handler) is an inline variable;
# pools::tools alone narrows its exports to what names pools (common/CMakeLists.txt).
function(pools_library_properties target)
  if(pools_VERSION_MAJOR EQUAL 0)
    set(_soversion ${pools_VERSION_MAJOR}.${pools_VERSION_MINOR})
  else()
    set(_soversion ${pools_VERSION_MAJOR})
  endif()
  set_target_properties(${target} PROPERTIES VERSION ${pools_VERSION} SOVERSION ${_soversion}
                                             INSTALL_RPATH "$ORIGIN")
endfunction()

# pools_variant_requires([TOOLS] [PACKAGE <find_package arguments>...])
# First in a variant's CMakeLists.txt: what the variant needs besides pools::common. TOOLS:
# pools::tools (fmt and nlohmann-json: every compiled variant, for its simulated seam). PACKAGE: one
# find_package() (e.g. Boost 1.74 COMPONENTS context). In the top-level project, and for a variant
# named in POOLS_VARIANTS, a missing need fails the configuration. A subproject that named no
# variants gets the ones whose needs are found: the others are skipped with one STATUS line (a
# macro, so that its return() leaves the variant's CMakeLists.txt).
macro(pools_variant_requires)
  cmake_parse_arguments(_pvr "TOOLS" "" "PACKAGE" ${ARGN})
  get_filename_component(_pvr_name ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  if(PROJECT_IS_TOP_LEVEL OR _pvr_name IN_LIST POOLS_VARIANTS)
    if(_pvr_PACKAGE)
      find_package(${_pvr_PACKAGE} REQUIRED)
    endif()
    if(_pvr_TOOLS AND NOT TARGET pools_tools)
      message(FATAL_ERROR "pools: variant '${_pvr_name}' needs fmt and nlohmann-json (pools::tools), "
                          "which were not found (Debian: libfmt-dev nlohmann-json3-dev)")
    endif()
  else()
    set(_pvr_missing "")
    if(_pvr_PACKAGE)
      find_package(${_pvr_PACKAGE} QUIET)
      list(GET _pvr_PACKAGE 0 _pvr_package)
      if(NOT ${_pvr_package}_FOUND)
        list(JOIN _pvr_PACKAGE " " _pvr_missing)
      endif()
    endif()
    if(_pvr_TOOLS AND NOT TARGET pools_tools)
      list(APPEND _pvr_missing "fmt and nlohmann-json")
    endif()
    if(_pvr_missing)
      message(STATUS "pools: variant '${_pvr_name}' skipped: ${_pvr_missing} not found "
                     "(name it in POOLS_VARIANTS to require it)")
      return()
    endif()
  endif()
endmacro()

# pools_add_test(<target> SOURCES ... LINK ... [LABELS ...] [TIMEOUT s])
# A doctest executable plus its ctest entry (same name as the target).
function(pools_add_test target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "SOURCES;LINK;LABELS")
  add_executable(${target} ${arg_SOURCES})
  target_link_libraries(${target} PRIVATE pools_doctest_main pools_warnings ${arg_LINK})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  endif()
  add_test(NAME ${target} COMMAND ${target} --duration=false)
  set_tests_properties(${target} PROPERTIES TIMEOUT ${arg_TIMEOUT} LABELS "${arg_LABELS}"
                       ENVIRONMENT "${POOLS_TEST_ENV}")
endfunction()

# pools_add_fault_test(<target> SOURCES ... LINK ... [LABELS ...])
# A doctest executable of fault tests (pools/testing/fault_loop.hpp): linked with the fault
# injection (a replaced operator new, an interposed pthread_create), so kept out of tests_<name>.
# Not with POOLS_TRACE: the recorder allocates its per-thread rings inside noexcept hooks, so a
# failed allocation there ends the process by design; the fault tests run on the hook-free builds.
function(pools_add_fault_test target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;LINK;LABELS")
  if(POOLS_TRACE)
    return()
  endif()
  pools_add_test(${target} SOURCES ${arg_SOURCES} LINK pools_fault_injection ${arg_LINK}
                 LABELS faults ${arg_LABELS} TIMEOUT 600)  # separate words: a quoted list would arrive as one label
endfunction()

# pools_add_trace_tests(<name> STEALS <yes|no> WORKLOAD <bench arguments>...)
# With -DPOOLS_TRACE=ON: trace_<name> runs bench_<name> with --trace and checks the file
# (tests/trace-run.py, tests/check-trace.py: Trace Event format, two worker tracks, tasks run =
# items posted, steal arrows when STEALS is yes, none when no, either when it is not given);
# trace_<name>_textbook the same on the textbook pool, which has one shared queue and so never
# steals. WORKLOAD defaults to "--workload fib --n 24" (textbook: --n 20).
function(pools_add_trace_tests name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "STEALS" "WORKLOAD")
  if(NOT POOLS_TRACE OR NOT POOLS_BUILD_TESTS OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  if(NOT arg_STEALS MATCHES "^(yes|no|)$")
    message(FATAL_ERROR "pools_add_variant(${name}): TRACE_STEALS must be yes or no, not '${arg_STEALS}'")
  endif()
  # The textbook pools record more events per task (fibers: every run of a fiber after a join):
  # a smaller tree keeps each thread's ring from overflowing, so the counts stay whole.
  set(_textbook_workload ${arg_WORKLOAD})
  if(NOT arg_WORKLOAD)
    set(arg_WORKLOAD --workload fib --n 24)
    set(_textbook_workload --workload fib --n 20)
  endif()
  set(_steals "")
  if(arg_STEALS STREQUAL "yes")
    set(_steals --steals)
  elseif(arg_STEALS STREQUAL "no")
    set(_steals --no-steals)
  endif()
  set(_run ${Python3_EXECUTABLE} ${POOLS_ROOT}/tests/trace-run.py bench $<TARGET_FILE:bench_${name}>)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/trace_${name})
  add_test(NAME trace_${name} COMMAND ${_run} ${_out}.json ${arg_WORKLOAD} --workers 2 ${_steals} --balanced)
  add_test(NAME trace_${name}_textbook
           COMMAND ${_run} ${_out}_textbook.json --textbook ${_textbook_workload} --workers 2 --no-steals --balanced)
  set_tests_properties(trace_${name} trace_${name}_textbook PROPERTIES TIMEOUT 300 LABELS "trace;${name}")
endfunction()

# pools_add_conformance(<name> TYPES <C++ type>... HEADERS <header>... LINK <target>...)
# Compiles the one conformance suite (common/conformance/) over the given executor types.
function(pools_add_conformance name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "TYPES;HEADERS;LINK")
  if(NOT arg_TYPES)
    message(FATAL_ERROR "pools_add_conformance(${name}): TYPES is empty")
  endif()
  set(_dir ${PROJECT_BINARY_DIR}/generated/conformance_${name})
  set(_content "// Generated by pools_add_conformance(${name}); do not edit.\n#pragma once\n")
  foreach(_h IN LISTS arg_HEADERS)
    string(APPEND _content "#include <${_h}>\n")
  endforeach()
  set(_names "")
  foreach(_t IN LISTS arg_TYPES)
    string(APPEND _content "POOLS_CONFORMANCE_NAME(${_t});\n")
  endforeach()
  list(JOIN arg_TYPES ", " _list)
  string(APPEND _content "#define POOLS_CONFORMANCE_TYPES ${_list}\n")
  file(CONFIGURE OUTPUT ${_dir}/pools_conformance_types.hpp CONTENT "${_content}")
  pools_add_test(conformance_${name}
    SOURCES ${POOLS_ROOT}/common/conformance/conformance.cpp
    LINK pools::common ${arg_LINK}
    LABELS conformance ${name})
  target_include_directories(conformance_${name} PRIVATE ${_dir} ${POOLS_ROOT}/common/conformance)
  if(CMAKE_CROSSCOMPILING_EMULATOR)  # thread starts are slow under qemu: scale as under TSan
    target_compile_definitions(conformance_${name} PRIVATE POOLS_EMULATED=1)
  endif()
endfunction()

# pools_generated_executor(<target> NAME <subject> TYPE <C++ type> HEADERS <header>...)
# The generic sources (bench/generic/bench_executor.cpp, server/drivers/generic.cpp) are written
# against pools::Executor alone; this writes the header that names the type for one target,
# <build>/generated/<target>/pools_generated_executor.hpp:
#   namespace pools::generated { using executor = <type>; name = "<subject>"; type_name = "<type>"; }
function(pools_generated_executor target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;TYPE" "HEADERS")
  set(_dir ${PROJECT_BINARY_DIR}/generated/${target})
  set(_content "// Generated by pools_generated_executor(${target}); do not edit.\n#pragma once\n")
  foreach(_h IN LISTS arg_HEADERS)
    string(APPEND _content "#include <${_h}>\n")
  endforeach()
  string(APPEND _content "namespace pools::generated {\nusing executor = ${arg_TYPE};\n"
         "inline constexpr const char* name = \"${arg_NAME}\";\n"
         "inline constexpr const char* type_name = \"${arg_TYPE}\";\n}  // namespace pools::generated\n")
  file(CONFIGURE OUTPUT ${_dir}/pools_generated_executor.hpp CONTENT "${_content}")
  target_include_directories(${target} PRIVATE ${_dir})
endfunction()

# pools_add_flavour_smoke_tests(<name> <flavours.txt>)
# Each line `<label> VAR=value...` of a variant's bench/flavours.txt is a subject of compare.py
# ("<name>/<label>": bench_<name> run under that environment, e.g. futures/textbook). Each gets
# the same smoke test as bench_<name> itself, run under that environment, so a flavour that
# compare.py would run is one the tests have run.
function(pools_add_flavour_smoke_tests name file)
  if(NOT EXISTS ${file} OR NOT POOLS_BUILD_TESTS OR NOT Python3_Interpreter_FOUND)
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
  file(STRINGS ${file} _lines)
  foreach(_line IN LISTS _lines)
    string(REGEX REPLACE "#.*" "" _line "${_line}")
    string(STRIP "${_line}" _line)
    if(_line STREQUAL "")
      continue()
    endif()
    separate_arguments(_words UNIX_COMMAND "${_line}")
    list(POP_FRONT _words _label)
    add_test(NAME bench_smoke_${name}_${_label}
             COMMAND ${Python3_EXECUTABLE} ${POOLS_BENCH_SMOKE} $<TARGET_FILE:bench_${name}> ${name}/${_label})
    set_tests_properties(bench_smoke_${name}_${_label} PROPERTIES TIMEOUT 600 LABELS "bench;${name}"
                         ENVIRONMENT "${POOLS_TEST_ENV};${_words}")
    if(_words MATCHES "POOLS_BENCH_POOL=")
      set(_reads_pool ON)
    endif()
  endforeach()
  # A bench that reads POOLS_BENCH_POOL (pools::bench::pool_from_environment) rejects a bad value.
  if(_reads_pool)
    pools_add_bad_environment_test(bench_${name}_bad_pool ${name} POOLS_BENCH_POOL fastest textbook)
  endif()
endfunction()

# pools_add_bad_environment_test(<test> <name> <VAR> <bad value> <a valid value>)
# bench_<name> run with VAR=<bad value> must exit 2 naming the variable, the value and the valid
# choice (bench/tests/check_bad_environment.cmake).
function(pools_add_bad_environment_test test name var value choice)
  add_test(NAME ${test}
           COMMAND ${CMAKE_COMMAND} -DBENCH=$<TARGET_FILE:bench_${name}> -DVAR=${var} -DVALUE=${value}
                   -DCHOICE=${choice} -P ${POOLS_BAD_ENVIRONMENT_CHECK})
  set_tests_properties(${test} PROPERTIES TIMEOUT 60 LABELS "bench;${name}" ENVIRONMENT "${POOLS_TEST_ENV}")
endfunction()

# pools_add_variant(<name>
#   EXECUTORS <C++ type>...   executor types the conformance suite runs; each must satisfy
#                             pools::Executor and be constructible from std::size_t (threads)
#   HEADERS <header>...       headers that declare them (as included: pools/<name>/x.hpp)
#   [SOURCES <file>...]       library sources; without them the library is header-only
#   [LINK <target>...]        what the library needs besides pools::common (a compiled variant:
#                             pools::tools, for its simulated seam)
#   [TEST_LINK <target>...]   extra libraries for tests_<name> only
#   [BENCH_LINK <target>...]  extra libraries for bench_<name> only)
#
# Conventions, so sibling variants look alike:
#   include/pools/<name>/...   public headers          -> library pools::<name>
#   src/*.cpp                  (listed in SOURCES)
#   tests/*.cpp                doctest unit tests      -> tests_<name>
#   tests/faults/*.cpp         fault tests (fail_alloc, fail_thread_start) -> faults_<name>
#   bench/*.cpp                workloads in the variant's own spelling -> bench_<name>
#                              (none: bench/generic/bench_executor.cpp over the first EXECUTORS type)
#   <root>/server/drivers/<name>.cpp  the HTTP driver  -> server_<name>
#                              (none: server/drivers/generic.cpp over the first EXECUTORS type)
#   variant_<name>             builds all of the above
# After the call, ${POOLS_VARIANT} holds <name>: use it for any further target names.
function(pools_add_variant name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TRACE_STEALS" "EXECUTORS;HEADERS;SOURCES;LINK;TEST_LINK;BENCH_LINK;TRACE_WORKLOAD")
  if(NOT arg_EXECUTORS OR NOT arg_HEADERS)
    message(FATAL_ERROR "pools_add_variant(${name}) needs EXECUTORS and HEADERS")
  endif()
  set(_src ${CMAKE_CURRENT_SOURCE_DIR})
  set(lib pools_${name})
  # The include path differs in the build tree and in an installation (cmake/install.cmake).
  set(_include $<BUILD_INTERFACE:${_src}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  if(arg_SOURCES)
    add_library(${lib} ${arg_SOURCES})  # static or shared: BUILD_SHARED_LIBS
    target_include_directories(${lib} PUBLIC ${_include})
    target_link_libraries(${lib} PUBLIC pools::common ${arg_LINK} PRIVATE $<BUILD_INTERFACE:pools_warnings>)
    pools_library_properties(${lib})
  else()
    add_library(${lib} INTERFACE)
    target_include_directories(${lib} INTERFACE ${_include})
    target_link_libraries(${lib} INTERFACE pools::common ${arg_LINK})
  endif()
  add_library(pools::${name} ALIAS ${lib})
  pools_install_component(${name} ${lib} ${_src}/include)
  set(_parts ${lib})

  if(POOLS_BUILD_TESTS)
    file(GLOB _tests CONFIGURE_DEPENDS ${_src}/tests/*.cpp)
    if(_tests)
      pools_add_test(tests_${name} SOURCES ${_tests} LINK pools::${name} ${arg_TEST_LINK} LABELS "${name}")
      list(APPEND _parts tests_${name})
    endif()
    # tests/faults/*.cpp: the fault tests (allocation and thread start failures) -> faults_<name>
    file(GLOB _fault_tests CONFIGURE_DEPENDS ${_src}/tests/faults/*.cpp)
    if(_fault_tests)
      pools_add_fault_test(faults_${name} SOURCES ${_fault_tests} LINK pools::${name} ${arg_TEST_LINK} LABELS "${name}")
      if(TARGET faults_${name})  # not with POOLS_TRACE
        list(APPEND _parts faults_${name})
      endif()
    endif()
    pools_add_conformance(${name} TYPES ${arg_EXECUTORS} HEADERS ${arg_HEADERS} LINK pools::${name})
    list(APPEND _parts conformance_${name})
  endif()

  # The bench and the server: the variant's own spelling when it has one (bench/*.cpp,
  # server/drivers/<name>.cpp), else the generic one over its first executor type.
  list(GET arg_EXECUTORS 0 _first_executor)
  file(GLOB _bench CONFIGURE_DEPENDS ${_src}/bench/*.cpp)
  if(TARGET pools::bench_harness)
    if(_bench)
      pools_add_bench(${name} SOURCES ${_bench} LINK pools::${name} ${arg_BENCH_LINK})
    else()
      pools_add_bench(${name} SOURCES ${POOLS_ROOT}/bench/generic/bench_executor.cpp LINK pools::${name} ${arg_BENCH_LINK})
      pools_generated_executor(bench_${name} NAME ${name} TYPE ${_first_executor} HEADERS ${arg_HEADERS})
    endif()
    list(APPEND _parts bench_${name})
    pools_add_flavour_smoke_tests(${name} ${_src}/bench/flavours.txt)
    pools_add_trace_tests(${name} STEALS "${arg_TRACE_STEALS}" WORKLOAD ${arg_TRACE_WORKLOAD})
  endif()

  if(COMMAND pools_add_server)
    set(_driver ${POOLS_ROOT}/server/drivers/${name}.cpp)
    if(EXISTS ${_driver})
      pools_add_server(${name} SOURCES ${_driver} LINK pools::${name})
    else()
      pools_add_server(${name} SOURCES ${POOLS_ROOT}/server/drivers/generic.cpp LINK pools::${name})
      pools_generated_executor(server_${name} NAME ${name} TYPE ${_first_executor} HEADERS ${arg_HEADERS})
    endif()
    list(APPEND _parts server_${name})
  endif()

  # A textbook pool (include/pools/<name>/textbook_pool.hpp) must read in one sitting.
  if(POOLS_BUILD_TESTS AND EXISTS ${_src}/include/pools/${name}/textbook_pool.hpp)
    add_test(NAME textbook_size_${name} COMMAND ${POOLS_ROOT}/tests/check_textbook_size.sh ${_src} 150)
    set_tests_properties(textbook_size_${name} PROPERTIES TIMEOUT 60 LABELS "${name};textbook")
  endif()

  # The Relacy models of this variant's protocols, defined in common/ (pools_add_model VARIANT).
  if(TARGET model_checks_${name})
    list(APPEND _parts model_checks_${name})
  endif()

  add_custom_target(variant_${name} DEPENDS ${_parts})
  set_property(GLOBAL APPEND PROPERTY POOLS_REGISTERED_VARIANTS ${name})
  # Extra targets a variant defines after this call (model checks, demos) are named from
  # ${POOLS_VARIANT}, never a literal, so a renamed copy of the folder still configures.
  set(POOLS_VARIANT ${name} PARENT_SCOPE)
endfunction()

# Called once at the end of the top-level CMakeLists: writes the list of registered variants
# for the scripts (bench runner, demo) so they too need no edit when a variant is added. Into the
# project's own binary dir (build/ when pools is the top-level project), never a parent's.
function(pools_finish_registration)
  get_property(_variants GLOBAL PROPERTY POOLS_REGISTERED_VARIANTS)
  list(JOIN _variants "\n" _lines)
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/pools_variants.txt CONTENT "${_lines}\n")
  list(JOIN _variants ", " _pretty)
  message(STATUS "pools: registered variants: ${_pretty}")
endfunction()

# pools_add_sim_program(<name> <source>): sim_<name>, a program with a seeded concurrency bug
# written on the variant that calls it (pools::<variant>; pools/sim/measure.hpp's command line,
# docs/testing-schedules.md), and its test sim_<name>_explore: PCT finds the bug within 1,000
# seeds and prints the replay line (~0.1 s). In a copy of a variant (tests/check_variant_copy.sh)
# the name is taken already: the copy's program is sim_<variant>_<name>. Without POOLS_BUILD_TESTS
# (a subproject, a libraries-only build) the program is defined but not part of `all`.
function(pools_add_sim_program name source)
  set(_target sim_${name})
  if(TARGET ${_target})
    set(_target sim_${POOLS_VARIANT}_${name})
  endif()
  if(POOLS_BUILD_TESTS)
    add_executable(${_target} ${source})
  else()
    add_executable(${_target} EXCLUDE_FROM_ALL ${source})
  endif()
  target_link_libraries(${_target} PRIVATE pools::${POOLS_VARIANT} pools_warnings)
  if(POOLS_BUILD_TESTS)
    add_test(NAME ${_target}_explore COMMAND ${_target} --explore pct:2:60 --seeds 1000)
    set_tests_properties(${_target}_explore PROPERTIES TIMEOUT 60 LABELS "${POOLS_VARIANT};sim"
                         PASS_REGULAR_EXPRESSION "replay: POOLS_SIM_SEED=[0-9]+ POOLS_SIM_STRATEGY=pct:2:60")
  endif()
endfunction()
