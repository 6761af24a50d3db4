// SPDX-License-Identifier: MIT
#include "server_process.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
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

// fork and exec rather than posix_spawn: only a child of our own can set its resource limits
// before the server starts. Between fork and exec the child calls only async-signal-safe functions
// (open, dup2, close, setrlimit, execve, _exit): the parent may have other threads, whose locks
// the child inherits held.
pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& out,
            const std::filesystem::path& err, const std::vector<resource_limit>& limits) {
  // In a cross build the server is a foreign executable: run it through the emulator ctest runs
  // this test under (POOLS_TEST_EMULATOR, cmake/pools.cmake), e.g. "/usr/bin/qemu-aarch64 -L /".
  std::vector<std::string> words;
  if (const char* e = std::getenv("POOLS_TEST_EMULATOR"); e != nullptr) {
    std::istringstream in(e);
    for (std::string w; in >> w;) words.push_back(w);
  }
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (const auto& a : words) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  REQUIRE_MESSAGE(pid >= 0, "cannot start ", words[0], ": fork: ", std::strerror(errno));
  if (pid == 0) {
    auto redirect = [](const char* path, int flags, int target) {
      const int fd = ::open(path, flags | O_CLOEXEC, 0644);
      if (fd < 0 || ::dup2(fd, target) < 0) ::_exit(126);  // dup2's copy is not close-on-exec
      ::close(fd);
    };
    redirect("/dev/null", O_RDONLY, STDIN_FILENO);
    redirect(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, STDOUT_FILENO);
    redirect(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, STDERR_FILENO);
    for (const auto& l : limits) {
      const rlimit r{static_cast<rlim_t>(l.soft), static_cast<rlim_t>(l.hard)};
      if (::setrlimit(l.resource, &r) != 0) ::_exit(126);
    }
    ::execve(argv[0], argv.data(), environ);
    ::_exit(127);  // as a shell reports a command it cannot run
  }
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

temp_dir::temp_dir() {
  std::random_device rd;
  path = std::filesystem::temp_directory_path() /
         ("pools_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(rd()));
  std::filesystem::create_directories(path);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

int slowdown() {
  const char* s = std::getenv("POOLS_SANITIZED");
  return s != nullptr && std::string(s) == "1" ? 4 : 1;
}

server_process::server_process(std::vector<std::string> args, const std::filesystem::path& log_dir,
                               const std::vector<resource_limit>& limits)
    : out_(log_dir / "server.stdout"), err_(log_dir / "server.stderr") {
  REQUIRE_MESSAGE(!server_path().empty(), "no --server=PATH given");
  args.insert(args.begin(), {server_path(), "--port", "0"});
  pid_ = spawn(args, out_, err_, limits);
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

std::chrono::milliseconds server_process::cpu_time() const {
  // /proc/PID/stat: fields 14 and 15 (utime, stime) in clock ticks, after "(comm)", which may
  // hold spaces: count from the last ')'.
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string field;
  long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i)
    if (i >= 14) ticks += std::stoll(field);
  return std::chrono::milliseconds(ticks * 1000 / ::sysconf(_SC_CLK_TCK));
}

long server_process::peak_rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

run_result run_server_command(const std::vector<std::string>& args, const std::filesystem::path& log_dir,
                              std::chrono::milliseconds limit, const std::vector<resource_limit>& limits) {
  std::vector<std::string> full{server_path()};
  full.insert(full.end(), args.begin(), args.end());
  const auto out = log_dir / "cmd.stdout", err = log_dir / "cmd.stderr";
  const pid_t pid = spawn(full, out, err, limits);
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
