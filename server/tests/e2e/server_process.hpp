// SPDX-License-Identifier: MIT
// A server_<name> child process for the end-to-end tests: started on port 0, its stdout and
// stderr captured in files, stopped with a signal, its exit status checked.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace e2e {

/// The server executable under test (from --server=PATH).
const std::string& server_path();
void set_server_path(std::string path);

/// A fresh directory under the system's temporary directory, removed with what it holds.
struct temp_dir {
  std::filesystem::path path;
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

/// A resource limit the child sets before it starts the server (setrlimit(resource, {soft, hard})),
/// e.g. {RLIMIT_NOFILE, 64, 64}: how the fault tests make the server run out of something.
struct resource_limit {
  int resource;
  std::uint64_t soft, hard;
};

/// Slack for sanitizer builds (POOLS_SANITIZED=1): timeouts are multiplied by it.
int slowdown();

class server_process {
 public:
  /// Starts `server_path()` with `args` plus "--port 0" and waits (bounded) for its
  /// "listening on 127.0.0.1:PORT" line. Fails the test case if it exits or stays silent.
  /// `limits` are set in the child before the server starts.
  explicit server_process(std::vector<std::string> args, const std::filesystem::path& log_dir,
                          const std::vector<resource_limit>& limits = {});
  /// Kills the process if it is still running (a test that wants a clean stop calls stop()).
  ~server_process();
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  bool running();
  void signal(int signo);
  /// The exit code once it exits within `limit` (128 + n if killed by signal n), nothing if not.
  std::optional<int> wait_exit(std::chrono::milliseconds limit);
  /// SIGTERM, then the exit code (within `limit`); kills it and returns -1 on a timeout.
  int stop(std::chrono::milliseconds limit = std::chrono::seconds(15));
  std::string stderr_text() const;
  /// The CPU time the process has used so far (user + system), from /proc.
  std::chrono::milliseconds cpu_time() const;
  /// The peak resident set (VmHWM) in KiB, from /proc.
  long peak_rss_kib() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  unsigned short port_ = 0;
  std::filesystem::path out_, err_;
};

/// Runs the server executable with `args` (no --port added), for the CLI tests: exit code and
/// stdout+stderr, within `limit`.
struct run_result {
  int exit_code = -1;
  std::string output;
};
run_result run_server_command(const std::vector<std::string>& args, const std::filesystem::path& log_dir,
                              std::chrono::milliseconds limit = std::chrono::seconds(20),
                              const std::vector<resource_limit>& limits = {});

}  // namespace e2e
