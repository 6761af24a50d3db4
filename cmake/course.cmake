# SPDX-License-Identifier: MIT
# course.cmake — the exercises of the course pack (course/, docs/course/).
#
# An exercise is one folder course/exercises/<id>/ whose CMakeLists.txt calls pools_add_exercise().
# The student edits the files listed under FILES; a check program (the CHECK sources, never edited
# by the student) says which requirement the code meets and which it does not.
#
#   exercise_<id>                the student's build: CHECK + the files as they are in exercises/<id>/
#   exercise_<id>_solution       only while course/solutions/<id>/ exists: CHECK + the reference
#                                solution's copy of each FILES entry (the start's copy where the
#                                solution has none)
#
# Tests, only while course/solutions/<id>/ exists (an instructor who deletes course/solutions/
# hands out a tree without them). Each grades as the graders do (course/tools/grade_run.py selftest):
# the static check of the files (course/tools/grade_static.py), then the check scored on the exercise's
# fixed rubric (course/exercises/<id>/rubric.json) through the check's result channel:
#   exercise_<id>_start_fails    the starting point scores at most 25 % of the code points and
#                                shows EXPECT_FAILURE (the readable reason a student sees)
#   exercise_<id>_solution       the reference solution scores full marks
#   exercise_<id>_cheat_<name>   one per folder course/cheats/<id>/<name>/ (instructor-only, like the
#                                solutions): that plausible cheat (a counter that lies, a fix that
#                                still blocks, a forged verdict: forge-*) loses points, showing the
#                                regex in the folder's EXPECT file (a static check's message for a
#                                cheat it refuses)
# So CI proves every exercise gradable: the grader tells the starting point from a solution, and
# cannot be talked into a pass by a cheat.
#
# pools_add_exercise(<id> CHECK <sources> FILES <student files> EXPECT_FAILURE <regex>
#                    [LINK <targets>] [SANITIZER address|thread] [TIMEOUT s] [RELACY])
# SANITIZER: the exercise is graded in that sanitizer's build only (scripts/grade-exercise.sh picks
# the preset); elsewhere its targets are still built (so the code compiles everywhere) but its tests
# are not registered (but for SANITIZER thread under an emulator: see below). TIMEOUT (default 120 s) bounds each test and, in grade-exercise.sh, the run.
# grade-exercise.sh reads both from the exercise's CMakeLists.txt as text: write them as literal
# words in the call ("SANITIZER thread", "TIMEOUT 240"), not through variables.
# RELACY: the check is a Relacy model test (relacy-dev, <relacy/relacy.hpp>), built the way
# common/CMakeLists.txt builds the model tests: common/model/ on the include path (its
# relacy_atomics.hpp), -w -O1 and no sanitizer instrumentation (Relacy runs the threads as fibers
# and checks every access itself), -fno-sized-deallocation (Relacy replaces the unsized global
# operator delete only). Without relacy-dev the exercise is skipped with one STATUS line, or the
# configuration fails when POOLS_REQUIRE_MODEL_CHECKS is ON (CI).
# The check programs share course/common/course/check.hpp (course::report, course::deadline).
function(pools_add_exercise id)
  cmake_parse_arguments(PARSE_ARGV 1 arg "RELACY" "EXPECT_FAILURE;SANITIZER;TIMEOUT" "CHECK;FILES;LINK")
  if(NOT arg_CHECK OR NOT arg_FILES OR NOT arg_EXPECT_FAILURE)
    message(FATAL_ERROR "pools_add_exercise(${id}): CHECK, FILES and EXPECT_FAILURE are required")
  endif()
  if(arg_RELACY AND CMAKE_CROSSCOMPILING)
    # Relacy simulates the C++ memory model, the same on every CPU: the native build runs it.
    message(STATUS "course: exercise ${id} skipped in this cross build: its check is a Relacy model, "
                   "which simulates the C++ memory model and runs in the native build")
    return()
  endif()
  if(arg_RELACY AND NOT EXISTS /usr/include/relacy/relacy.hpp)
    if(POOLS_REQUIRE_MODEL_CHECKS)
      message(FATAL_ERROR "course: exercise ${id} needs relacy-dev (/usr/include/relacy/relacy.hpp is missing) "
                          "and POOLS_REQUIRE_MODEL_CHECKS is ON. Install it (apt-get install relacy-dev, or "
                          "scripts/bootstrap.sh) or configure with -DPOOLS_REQUIRE_MODEL_CHECKS=OFF.")
    endif()
    message(STATUS "course: exercise ${id} skipped: its check is a Relacy model and relacy-dev is not installed")
    return()
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  # A hand-out configured with fewer variants (-DPOOLS_VARIANTS=futures) skips the exercises whose
  # libraries it does not build, with one line that says so.
  foreach(lib IN LISTS arg_LINK)
    if(lib MATCHES "^pools" AND NOT TARGET ${lib})
      message(STATUS "course: exercise ${id} skipped: it needs ${lib}, which this configuration does not build")
      return()
    endif()
  endforeach()
  set(start_dir ${POOLS_ROOT}/course/exercises/${id})
  set(solution_dir ${POOLS_ROOT}/course/solutions/${id})

  # One program per copy of the student files; each copy's folder comes first on the include path,
  # so a header the student edits is found in the copy being built. A CHECK source must include
  # such a header with <...>: "..." looks next to the including file first, which for a check is
  # the start's folder, so the solution program would silently be built from the start's copy.
  function(_pools_exercise_program target files_dir)
    set(sources ${arg_CHECK})
    foreach(f IN LISTS arg_FILES)
      if(EXISTS ${files_dir}/${f})
        set(path ${files_dir}/${f})
      else()
        set(path ${start_dir}/${f})
      endif()
      if(f MATCHES "\\.cpp$")
        list(APPEND sources ${path})
      endif()
    endforeach()
    add_executable(${target} ${sources})
    # course/common: what every check program shares (course/check.hpp: the report, the watchdog).
    target_include_directories(${target} BEFORE PRIVATE ${files_dir} ${start_dir})
    target_include_directories(${target} PRIVATE ${POOLS_ROOT}/course/common)
    # COURSE_PROGRAM: the student's program as they run it from the checkout's root (a check that
    # prints a replay command names it): build/... or build-tsan/..., absolute outside the checkout.
    file(RELATIVE_PATH program ${POOLS_ROOT} ${CMAKE_CURRENT_BINARY_DIR}/exercise_${id})
    if(program MATCHES "^\\.\\./")
      set(program ${CMAKE_CURRENT_BINARY_DIR}/exercise_${id})
    endif()
    target_compile_definitions(${target} PRIVATE "COURSE_PROGRAM=\"${program}\"")
    # The exercise's hidden tests (instructor only, not in the hand-out): the check includes
    # <hidden_tests.hpp> when this folder is on its include path.
    # With them, the reference solution's copy of the first FILES entry, for the speed tests that
    # measure against it in the same run (COURSE_REFERENCE_HEADER): from hidden/<id>/reference/, where
    # scripts/grade-class.sh and scripts/gradescope.sh put it, or course/solutions/<id>/.
    if(EXISTS ${POOLS_ROOT}/course/instructor/hidden/${id})
      target_include_directories(${target} PRIVATE ${POOLS_ROOT}/course/instructor/hidden/${id})
      list(GET arg_FILES 0 first_file)
      # A copy without its #pragma once: in the solution's own program the same file is the
      # student's header too, and the pragma would skip the second inclusion.
      foreach(ref_dir ${POOLS_ROOT}/course/instructor/hidden/${id}/reference ${solution_dir})
        if(EXISTS ${ref_dir}/${first_file})
          file(READ ${ref_dir}/${first_file} ref_text)
          string(REPLACE "#pragma once" "// (the grader's copy: included once, by the hidden tests)" ref_text
                         "${ref_text}")
          set(ref_copy ${CMAKE_CURRENT_BINARY_DIR}/reference/${first_file})
          file(CONFIGURE OUTPUT ${ref_copy} CONTENT "${ref_text}" @ONLY)
          set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ref_dir}/${first_file})
          target_compile_definitions(${target} PRIVATE "COURSE_REFERENCE_HEADER=\"${ref_copy}\"")
          break()
        endif()
      endforeach()
    endif()
    target_link_libraries(${target} PRIVATE pools_warnings Threads::Threads ${arg_LINK})
    if(arg_RELACY)
      target_include_directories(${target} PRIVATE ${POOLS_ROOT}/common/model)
      target_compile_options(${target} PRIVATE -w -O1 -fno-sanitize=all -fno-sized-deallocation)
      target_link_options(${target} PRIVATE -fno-sanitize=all)
    endif()
  endfunction()

  _pools_exercise_program(exercise_${id} ${start_dir})
  if(NOT POOLS_BUILD_TESTS OR NOT EXISTS ${solution_dir})
    return()
  endif()
  _pools_exercise_program(exercise_${id}_solution ${solution_dir})
  file(GLOB cheat_dirs LIST_DIRECTORIES true ${POOLS_ROOT}/course/cheats/${id}/*)
  if(CMAKE_CROSSCOMPILING)
    # Under an emulator (the arm64 preset) the start and the solution are graded; the cheats
    # prove the graders, which the native build does.
    set(cheat_dirs "")
  endif()
  set(cheats "")
  foreach(cheat_dir IN LISTS cheat_dirs)
    if(IS_DIRECTORY ${cheat_dir} AND EXISTS ${cheat_dir}/EXPECT)
      get_filename_component(cheat ${cheat_dir} NAME)
      # EXPECT: the regex on its first line; "build: no" for a cheat that must not even compile
      # (its own copy of a given type): only the static check runs; "run: REGEX" for a forged
      # verdict the result channel must also refuse when the program runs (course/tools/grade_run.py).
      file(STRINGS ${cheat_dir}/EXPECT expect_lines)
      list(GET expect_lines 0 expect)
      if("build: no" IN_LIST expect_lines)
        set(cheat_exe_${cheat} -)
      else()
        _pools_exercise_program(exercise_${id}_cheat_${cheat} ${cheat_dir})
        set(cheat_exe_${cheat} $<TARGET_FILE:exercise_${id}_cheat_${cheat}>)
      endif()
      list(APPEND cheats ${cheat})
      set(cheat_expect_${cheat} "${expect}")
    endif()
  endforeach()

  if(arg_SANITIZER)
    # Under an emulator (the arm64 preset), where no sanitizer runs, an exercise graded under
    # ThreadSanitizer still has its start and solution graded: its verdict comes from its own
    # checks, and TSan only adds the data races (07). Under AddressSanitizer it does not (06: the
    # verdict is ASan's report).
    if(NOT POOLS_SANITIZER STREQUAL arg_SANITIZER AND NOT (CMAKE_CROSSCOMPILING AND arg_SANITIZER STREQUAL "thread"))
      return()
    endif()
  elseif(POOLS_SANITIZER OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # Graded in the GCC release build, as scripts/grade-exercise.sh does.
    return()
  endif()
  # Each test grades the way the graders do (course/tools/grade_run.py selftest): the static check of the
  # files (course/tools/grade_static.py), then the check program scored on the exercise's rubric.json
  # through its result channel.
  # Under an emulator (the arm64 preset) grade_run.py runs the program through POOLS_TEST_EMULATOR.
  set(_selftest python3 ${POOLS_ROOT}/course/tools/grade_run.py selftest ${id})
  add_test(NAME exercise_${id}_start_fails
           COMMAND ${_selftest} ${start_dir} $<TARGET_FILE:exercise_${id}> start --timeout ${arg_TIMEOUT})
  add_test(NAME exercise_${id}_solution
           COMMAND ${_selftest} ${solution_dir} $<TARGET_FILE:exercise_${id}_solution> solution --timeout ${arg_TIMEOUT})
  set_tests_properties(exercise_${id}_start_fails exercise_${id}_solution PROPERTIES
                       TIMEOUT ${arg_TIMEOUT} LABELS "course" ENVIRONMENT "${POOLS_TEST_ENV}")
  foreach(cheat IN LISTS cheats)
    add_test(NAME exercise_${id}_cheat_${cheat}
             COMMAND ${_selftest} ${POOLS_ROOT}/course/cheats/${id}/${cheat}
                     ${cheat_exe_${cheat}} "${cheat_expect_${cheat}}" --timeout ${arg_TIMEOUT})
    set_tests_properties(exercise_${id}_cheat_${cheat} PROPERTIES
                         TIMEOUT ${arg_TIMEOUT} LABELS "course" ENVIRONMENT "${POOLS_TEST_ENV}")
  endforeach()
endfunction()
