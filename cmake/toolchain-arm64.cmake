# SPDX-License-Identifier: MIT
# Cross-compiles for Linux arm64 (aarch64) on a Debian x86-64 host; the `arm64` preset uses it.
# Debian packages (scripts/bootstrap.sh arm64 installs them):
#   g++-aarch64-linux-gnu            the cross compiler (its own sysroot: /usr/aarch64-linux-gnu)
#   libboost-*-dev:arm64, libfmt-dev:arm64, libtbb-dev:arm64   multiarch libraries, after
#                                    `dpkg --add-architecture arm64`, in /usr/lib/aarch64-linux-gnu
#   qemu-user                        qemu-aarch64: runs the arm64 tests on the x86-64 host
#
# Tests run through CMAKE_CROSSCOMPILING_EMULATOR, `qemu-aarch64 -L /`: the loader and the shared
# libraries come from the host's root, where the multiarch packages put the arm64 ones
# (/lib/ld-linux-aarch64.so.1, /usr/lib/aarch64-linux-gnu). Under qemu 7.2 (Debian 12), a program
# loaded from the cross toolchain's own sysroot (-L /usr/aarch64-linux-gnu) hangs when it starts
# its first thread; the multiarch libc of the same version does not.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Find the arm64 multiarch packages (CMake configs, headers, libraries), never the host's x86-64
# ones; programs (python3, cloc, clang-format) still come from the host.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(POOLS_QEMU_AARCH64 qemu-aarch64)
if(NOT POOLS_QEMU_AARCH64)
  message(FATAL_ERROR "toolchain-arm64: qemu-aarch64 not found (Debian package qemu-user; "
                      "scripts/bootstrap.sh arm64 installs it)")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${POOLS_QEMU_AARCH64} -L /)
