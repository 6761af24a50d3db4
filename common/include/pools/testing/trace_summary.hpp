// SPDX-License-Identifier: MIT
// pools/testing/trace_summary.hpp — the export a trace test checks: the events recorded since the
// last pools::trace::mark(), written to a temporary file and read back as counts.
//
// The file is removed again (the tests compare counts, not the JSON, which tests/check-trace.py
// checks); the summary is printed so a failing test's log shows what was recorded.
#pragma once

#include <pools/trace_export.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace pools::testing {

/// Exports the trace to pools_trace_<name>_<pid>.json in the temporary directory, removes the
/// file, prints the summary to stdout and returns it.
inline pools::trace::summary export_trace_summary(std::string_view name) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pools_trace_" + std::string(name) + "_" + std::to_string(::getpid()) + ".json"))
                               .string();
  auto s = pools::trace::write_chrome_json(path);  // not const: returned by move
  std::filesystem::remove(path);
  pools::trace::print_summary(s, stdout);
  return s;
}

}  // namespace pools::testing
