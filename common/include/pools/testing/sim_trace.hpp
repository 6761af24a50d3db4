// SPDX-License-Identifier: MIT
// pools/testing/sim_trace.hpp — a simulated run's Perfetto trace as text, for the tests that check
// that the same seed writes the same trace, byte for byte (docs/testing-schedules.md).
#pragma once

#include <pools/sim/scheduler.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace pools::testing {

/// What engine.write_trace() writes, read back from pools_sim_<name>_<pid>.json in the temporary
/// directory, which is removed again.
inline std::string sim_trace_text(const pools::sim::scheduler& engine, std::string_view name) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("pools_sim_" + std::string(name) + "_" + std::to_string(::getpid()) + ".json");
  engine.write_trace(path.string());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::filesystem::remove(path);
  return text.str();
}

}  // namespace pools::testing
