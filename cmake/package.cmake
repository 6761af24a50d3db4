# SPDX-License-Identifier: MIT
# package.cmake — `cpack -G DEB` in a build tree: the Debian package libpools-dev of the installed
# library (what cmake/install.cmake installs: headers, libraries, the CMake package pools).
# examples/consumer/check-deb.sh builds it (libraries only, static with PIC, installed under /usr) and, in a
# Debian 13 root, installs it and builds examples/consumer against it (docs/using-the-library.md).
#
# Depends names the Debian packages the installed components need, from what this build holds:
#   fibers                  libboost-context-dev  (Boost.Context, and Boost's CMake package)
#   reactor                 libboost-dev          (Asio, header-only)
#   tools (static library)  libfmt-dev            (linked by every program of a compiled variant)
# common and futures need none: a futures-only program needs nothing but the compiler. nlohmann-json
# is used inside pools::tools alone and is no dependency. The names are the same in Debian 12 and 13.
if(NOT POOLS_INSTALL)
  return()
endif()

set(_depends "")
if(TARGET pools_fibers)
  list(APPEND _depends libboost-context-dev)
endif()
if(TARGET pools_reactor OR TARGET pools_fibers)
  list(APPEND _depends libboost-dev)
endif()
if(TARGET pools_tools AND NOT BUILD_SHARED_LIBS)
  list(APPEND _depends libfmt-dev)
endif()
list(JOIN _depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
if(BUILD_SHARED_LIBS)
  # Shared libraries: the run-time packages they load (libfmt<N>, libstdc++6, ...) from dpkg-shlibdeps.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libpools-dev)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "pools maintainers <pools@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_CURRENT_LIST_DIR}/../LICENSE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # libpools-dev_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "C++20 thread pools (futures, fibers, coroutines, reactor): headers, libraries, CMake package
 Four thread-pool designs behind one pools::Executor concept. find_package(pools CONFIG
 REQUIRED COMPONENTS futures) and link pools::futures (header-only), or coroutines, fibers,
 reactor.")
include(CPack)
