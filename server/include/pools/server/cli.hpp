// SPDX-License-Identifier: MIT
// pools/server/cli.hpp — the command line shared by every server_<variant>.
//
//   server_<variant> [--port P] [--threads N] [--root DIR] [--max-body B] [--strategy S]
//                    [--max-connections C] [--idle-timeout-ms T] [--header-timeout-ms T]
//                    [--shutdown-timeout-ms T] [--queue-limit Q] [--address A] [--access-log] [--help]
//
// Bad usage prints "error: <what>" and "(run with --help for usage)" on stderr and exits 2, as
// the bench executables do.
#pragma once

#include <pools/server/options.hpp>

#include <string_view>
#include <variant>
#include <vector>

namespace pools::server {

/// What a driver says about itself.
struct program {
  std::string_view name;     ///< the variant: the executable is server_<name>
  std::string_view summary;  ///< one line for --help: how this driver waits
  /// Accepted --strategy values; the first is the default. Empty: the driver has no strategies
  /// and --strategy is an error.
  std::vector<std::string_view> strategies = {};
  /// Worker model: hand every request to the pool (see job.hpp, job::kind::respond).
  bool every_request_is_a_job = false;
  /// The driver bounds its pool's queue with --queue-limit (connection::reject answers 503 when
  /// it is full). False: --queue-limit is an error.
  bool bounded_queue = false;
};

/// The options, or the exit code to return at once: 0 after --help (usage printed on stdout),
/// 2 after a usage error (message printed on stderr).
std::variant<options, int> parse_command_line(const program& prog, int argc, const char* const* argv);

/// The usage text of --help.
std::string usage(const program& prog);

}  // namespace pools::server
