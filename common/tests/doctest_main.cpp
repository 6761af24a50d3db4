// SPDX-License-Identifier: MIT
// One main() for every doctest executable in the project, compiled once.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
