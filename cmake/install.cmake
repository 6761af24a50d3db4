# SPDX-License-Identifier: MIT
# install.cmake — `cmake --install <build> --prefix P` and the CMake package `pools`.
#
# What is installed (with POOLS_INSTALL, ON when pools is the top-level project):
#   P/include/pools/...                  the public headers of pools::common and of each variant
#   P/lib/libpools_<name>.a or .so*      the libraries (BUILD_SHARED_LIBS; common and futures are
#                                        header-only: none)
#   P/lib/cmake/pools/poolsConfig.cmake  find_package(pools CONFIG REQUIRED COMPONENTS <name>...)
#   P/lib/cmake/pools/poolsConfigVersion.cmake   the version of project(); 0.x: same minor only
#   P/lib/cmake/pools/pools-<name>-targets.cmake       pools::<name>, as inside the tree
#   P/lib/cmake/pools/pools-<name>-dependencies.cmake  find_dependency() of what pools::<name> links
# One component per registered variant, plus `common` (header-only, which every variant links),
# `runtime` and `tools` (common/CMakeLists.txt). A component brings only its own dependencies: the
# dependencies file is written from the target's own INTERFACE_LINK_LIBRARIES, so it cannot drift
# from what the exported target names; the pools libraries it links are loaded first (the config's
# _pools_before_<name> lists, written from the same property). A shared library's PRIVATE links
# are not exported at all, so a consumer of shared libraries finds fewer dependencies.
#
# Nothing configure-time generated is part of a library: the generated headers of the tree
# (pools_add_conformance, pools_generated_executor) belong to tests, bench and server. POOLS_TRACE
# reaches consumers as the compile definition pools::common exports (pools/trace.hpp).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(POOLS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pools)

# The minimum Boost every find_package(Boost) of the tree asks for.
set(POOLS_BOOST_MIN_VERSION 1.74)

# pools_install_component(<name> <target> <include dir>)
# Installs <target> as pools::<name> (its own export set, so a consumer loads only the components
# it asks for) and the headers under <include dir>; pools_install_package() writes the rest.
# Headers under pools/testing/ are the tests' helpers (they need doctest): not installed.
# An empty <include dir>: the target's headers are another component's (runtime, tools: common's).
function(pools_install_component name target include_dir)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  set_property(GLOBAL APPEND PROPERTY POOLS_INSTALL_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY POOLS_INSTALL_TARGET_${name} ${target})
  if(NOT POOLS_INSTALL)
    return()
  endif()
  install(TARGETS ${target} EXPORT pools-${name}-targets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  if(include_dir)
    install(DIRECTORY ${include_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN testing EXCLUDE)
  endif()
  install(EXPORT pools-${name}-targets NAMESPACE pools:: DESTINATION ${POOLS_INSTALL_CMAKEDIR})
endfunction()

# The find_dependency() line for one entry of a target's INTERFACE_LINK_LIBRARIES, or "".
# A static library's private links are exported as $<LINK_ONLY:x> (the consumer's link needs x);
# $<BUILD_INTERFACE:x> is the build tree's alone (warnings, header-only libraries used by .cpp
# files only) and is not exported.
function(_pools_find_dependency_line entry out)
  set(line "")
  string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" entry "${entry}")
  if(entry MATCHES "^\\$<BUILD_INTERFACE:" OR entry MATCHES "^pools::")
    set(line "")
  elseif(entry STREQUAL "Threads::Threads")
    set(line "find_dependency(Threads)")
  elseif(entry STREQUAL "Boost::headers" OR entry STREQUAL "Boost::boost")
    set(line "find_dependency(Boost ${POOLS_BOOST_MIN_VERSION})")
  elseif(entry MATCHES "^Boost::(.+)$")
    set(line "find_dependency(Boost ${POOLS_BOOST_MIN_VERSION} COMPONENTS ${CMAKE_MATCH_1})")
  elseif(entry MATCHES "^([A-Za-z0-9_]+)::")
    set(line "find_dependency(${CMAKE_MATCH_1})")
  elseif(entry MATCHES "^\\$<")
    message(FATAL_ERROR "pools install: cannot tell the package of the link entry '${entry}'")
  endif()
  set(${out} "${line}" PARENT_SCOPE)
endfunction()

# The pools components <name> links (directly or through another), each after those it links:
# the order the config loads them in. <out> does not hold <name> itself.
function(_pools_components_before name out)
  get_property(_target GLOBAL PROPERTY POOLS_INSTALL_TARGET_${name})
  get_target_property(_links ${_target} INTERFACE_LINK_LIBRARIES)
  set(_order "")
  foreach(_entry IN LISTS _links)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _entry "${_entry}")
    if(_entry MATCHES "^pools::(.+)$")
      _pools_components_before(${CMAKE_MATCH_1} _deeper)
      list(APPEND _order ${_deeper} ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _order)
  set(${out} "${_order}" PARENT_SCOPE)
endfunction()

# Called once, at the end of the top-level CMakeLists (after every variant registered): the
# dependencies file of each component, the package's config and version files, all under the
# project's own binary dir.
function(pools_install_package)
  if(NOT POOLS_INSTALL)
    return()
  endif()
  get_property(_components GLOBAL PROPERTY POOLS_INSTALL_COMPONENTS)
  set(POOLS_COMPONENT_ORDER "")
  foreach(_name IN LISTS _components)
    get_property(_target GLOBAL PROPERTY POOLS_INSTALL_TARGET_${_name})
    get_target_property(_links ${_target} INTERFACE_LINK_LIBRARIES)
    set(_content "# Generated by pools_install_package(): what pools::${_name} links from outside pools.\n")
    foreach(_entry IN LISTS _links)
      _pools_find_dependency_line("${_entry}" _line)
      string(FIND "${_content}" "${_line}" _seen)
      if(_line AND _seen EQUAL -1)
        string(APPEND _content "${_line}\n")
      endif()
    endforeach()
    _pools_components_before(${_name} _before)
    string(APPEND POOLS_COMPONENT_ORDER "set(_pools_before_${_name} \"${_before}\")\n")
    set(_file ${PROJECT_BINARY_DIR}/pools-package/pools-${_name}-dependencies.cmake)
    file(CONFIGURE OUTPUT ${_file} CONTENT "${_content}")
    install(FILES ${_file} DESTINATION ${POOLS_INSTALL_CMAKEDIR})
  endforeach()

  # Every variant the source tree has, built or not: the config tells "not built here" from
  # "no such component".
  file(GLOB _all RELATIVE ${POOLS_ROOT}/variants ${POOLS_ROOT}/variants/*/CMakeLists.txt)
  list(TRANSFORM _all REPLACE "/CMakeLists.txt$" "")
  list(SORT _all)
  set(POOLS_KNOWN_COMPONENTS common runtime tools ${_all})
  set(POOLS_INSTALLED_COMPONENTS ${_components})
  configure_package_config_file(${POOLS_ROOT}/cmake/poolsConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/pools-package/poolsConfig.cmake
                                INSTALL_DESTINATION ${POOLS_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/pools-package/poolsConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/pools-package/poolsConfig.cmake
                ${PROJECT_BINARY_DIR}/pools-package/poolsConfigVersion.cmake
          DESTINATION ${POOLS_INSTALL_CMAKEDIR})
  install(FILES ${POOLS_ROOT}/LICENSE DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pools)
endfunction()
