// SPDX-License-Identifier: MIT
#include "server_process.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace e2e {

namespace {
std::string g_server;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& out,
            const std::filesystem::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // In a cross build the server is a foreign executable: run it through the emulator ctest runs
  // this test under (POOLS_TEST_EMULATOR, cmake/pools.cmake), e.g. "/usr/bin/qemu-aarch64 -L /".
  std::vector<std::string> words;
  if (const char* e = std::getenv("POOLS_TEST_EMULATOR"); e != nullptr) {
    std::istringstream in(e);
    for (std::string w; in >> w;) words.push_back(w);
  }
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (const auto& a : words) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "cannot start ", words[0], ": ", std::strerror(rc));
  return pid;
}

std::optional<int> reap(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace

const std::string& server_path() {
  return g_server;
}
void set_server_path(std::string path) {
  g_server = std::move(path);
}

int slowdown() {
  const char* s = std::getenv("POOLS_SANITIZED");
  return s != nullptr && std::string(s) == "1" ? 4 : 1;
}

server_process::server_process(std::vector<std::string> args, const std::filesystem::path& log_dir)
    : out_(log_dir / "server.stdout"), err_(log_dir / "server.stderr") {
  REQUIRE_MESSAGE(!server_path().empty(), "no --server=PATH given");
  args.insert(args.begin(), {server_path(), "--port", "0"});
  pid_ = spawn(args, out_, err_);
  const std::string prefix = "listening on 127.0.0.1:";
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20) * slowdown();
  while (std::chrono::steady_clock::now() < end) {
    const std::string text = slurp(out_);
    if (const auto at = text.find(prefix);
        at != std::string::npos && text.find('\n', at) != std::string::npos) {
      port_ = static_cast<unsigned short>(std::stoi(text.substr(at + prefix.size())));
      return;
    }
    if (auto code = reap(pid_, std::chrono::milliseconds(0)); code) {
      reaped_ = true;
      status_ = *code;
      FAIL("the server exited with ", *code, " before listening; stderr:\n", stderr_text());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the server printed no 'listening on 127.0.0.1:PORT' line; stdout:\n", slurp(out_), "\nstderr:\n",
       stderr_text());
}

server_process::~server_process() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    reap(pid_, std::chrono::seconds(10));
  }
}

bool server_process::running() {
  if (reaped_) return false;
  if (auto code = reap(pid_, std::chrono::milliseconds(0)); code) {
    reaped_ = true;
    status_ = *code;
  }
  return !reaped_;
}

void server_process::signal(int signo) {
  REQUIRE(!reaped_);
  ::kill(pid_, signo);
}

std::optional<int> server_process::wait_exit(std::chrono::milliseconds limit) {
  if (reaped_) return status_;
  auto code = reap(pid_, limit);
  if (code) {
    reaped_ = true;
    status_ = *code;
  }
  return code;
}

int server_process::stop(std::chrono::milliseconds limit) {
  if (!reaped_) ::kill(pid_, SIGTERM);
  if (auto code = wait_exit(limit * slowdown()); code) return *code;
  ::kill(pid_, SIGKILL);
  wait_exit(std::chrono::seconds(10));
  return -1;
}

std::string server_process::stderr_text() const {
  return slurp(err_);
}

long server_process::peak_rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

run_result run_server_command(const std::vector<std::string>& args, const std::filesystem::path& log_dir,
                              std::chrono::milliseconds limit) {
  std::vector<std::string> full{server_path()};
  full.insert(full.end(), args.begin(), args.end());
  const auto out = log_dir / "cmd.stdout", err = log_dir / "cmd.stderr";
  const pid_t pid = spawn(full, out, err);
  run_result r;
  const auto code = reap(pid, limit * slowdown());
  if (!code) {
    ::kill(pid, SIGKILL);
    reap(pid, std::chrono::seconds(10));
  }
  r.exit_code = code.value_or(-1);
  r.output = slurp(out) + slurp(err);
  return r;
}

}  // namespace e2e
