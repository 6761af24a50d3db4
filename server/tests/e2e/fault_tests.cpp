// SPDX-License-Identifier: MIT
// The server when the machine says no: out of descriptors, out of threads. Each case starts
// server_<name> as a child with a resource limit set before exec (e2e::resource_limit), makes the
// fault happen for real, and checks what nginx does in the same place: keep serving what it has,
// say so once, recover when the resource comes back; or, at start-up, stop with one line.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client.hpp"
#include "server_process.hpp"

namespace {

using namespace std::chrono_literals;
using e2e::client;
using e2e::fetch;
using e2e::get;
using e2e::timed;

bool contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

std::size_t count_lines_with(const std::string& text, std::string_view what) {
  std::istringstream lines(text);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line);) n += contains(line, what) ? 1 : 0;
  return n;
}

nlohmann::json stats(unsigned short port) {
  const auto r = fetch(port, get("/stats"));
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

/// A TCP connection to 127.0.0.1:port that sends nothing: a plain socket, so that a flood of them
/// costs the test one descriptor each and no I/O machinery.
int idle_connection(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // The kernel completes the handshake and queues the connection whether or not the server can
  // accept it (up to the listen backlog), so this returns at once even when the server is out of
  // descriptors.
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

/// Polls the server's stderr until it holds `what`, for at most `limit`.
bool wait_for_log(const e2e::server_process& server, std::string_view what, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (contains(server.stderr_text(), what)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return contains(server.stderr_text(), what);
}

/// The soft limit on open files of a running process (/proc/PID/limits), or -1.
long long open_files_soft_limit(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string_view("Max open files").size()));
    long long soft = -1;
    fields >> soft;
    return soft;
  }
  return -1;
}

}  // namespace

// 64 descriptors, soft and hard, so the server cannot raise the limit: the default
// --max-connections (10,000) is lowered at start-up with a warning, and a flood of 120 idle
// connections (more than the server can hold, fewer than a 128-entry listen queue) runs it out of
// descriptors at accept(). It must then serve the connection it had, without spinning (an accept
// retried at once fails at once, forever: before the pause it burned 0.4-0.7 s of CPU a second and
// wrote a log line per retry), log the pause once, and accept again within 1 s of the flood
// closing. (nginx, in the same test, pauses and recovers the same way.)
TEST_CASE(
    "faults: out of descriptors, accepting pauses and resumes within 1 s; open connections are served") {
  e2e::temp_dir tmp;
  e2e::server_process server({"--threads", "2"}, tmp.path, {{RLIMIT_NOFILE, 64, 64}});
  const auto port = server.port();
  // Read only if an assertion below fails (doctest evaluates INFO lazily): what the server said
  // before it closed a connection or went away.
  INFO("the server's stderr:\n", server.stderr_text());
  {
    const auto log = server.stderr_text();
    CHECK_MESSAGE(contains(log, "--max-connections 10000 needs"), log);
    CHECK_MESSAGE(contains(log, "the limit (RLIMIT_NOFILE) is 64 (hard limit 64)"), log);
    const auto max = stats(port)["connections"]["max"].get<std::uint64_t>();
    CHECK(max >= 1);
    CHECK(max < 64);
  }
  client held(port);
  REQUIRE(held.exchange(get("/plaintext")).status == 200);

  const auto flood_began = std::chrono::steady_clock::now();
  std::vector<int> flood;
  flood.reserve(120);
  for (int i = 0; i < 120; ++i) flood.push_back(idle_connection(port));
  REQUIRE_MESSAGE(wait_for_log(server, "accept: Too many open files", e2e::io_timeout()),
                  "the server never ran out of descriptors; stderr:\n", server.stderr_text());

  // Out of descriptors for a second: the server waits, it does not spin.
  const auto cpu_before = server.cpu_time();
  std::this_thread::sleep_for(1s);
  const auto cpu = server.cpu_time() - cpu_before;
  CHECK_MESSAGE(cpu < 100ms * e2e::slowdown(), "the server used ", cpu.count(),
                " ms of CPU in 1 s while out of descriptors");
  // The connection it had is served meanwhile, at once.
  const auto took = timed([&] { CHECK(held.exchange(get("/json")).status == 200); });
  CHECK(took < 500ms * e2e::slowdown());
  // One line per pause, not one per retry: at most one per retry interval (100 ms) since the flood.
  {
    const auto log = server.stderr_text();
    const auto lines = count_lines_with(log, "accept: Too many open files");
    const auto elapsed = std::chrono::steady_clock::now() - flood_began;
    CHECK_MESSAGE(lines <= static_cast<std::size_t>(elapsed / 100ms) + 1, lines, " accept lines in ",
                  std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), " ms");
  }

  // The flood goes; a new client is served within 1 s of the descriptors coming free. (A 503
  // is possible for a moment, while the server counts the flood's connections it has yet to
  // read the end of: the loop goes on until a 200.)
  for (const int fd : flood) ::close(fd);
  const auto freed = std::chrono::steady_clock::now();
  int status = 0;
  while (std::chrono::steady_clock::now() - freed < 5s * e2e::slowdown()) {
    status = fetch(port, get("/plaintext")).status;
    if (status == 200) break;
    std::this_thread::sleep_for(10ms);
  }
  const auto back_after =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - freed);
  CHECK(status == 200);
  CHECK_MESSAGE(back_after < 1000ms * e2e::slowdown(), "served again ", back_after.count(),
                " ms after the flood closed");
  CHECK(contains(server.stderr_text(), "accept: accepting again after"));
  CHECK(held.exchange(get("/plaintext")).status == 200);
  const int code = server.stop();
  CHECK_MESSAGE(code == 0, "exit code ", code, "; stderr:\n", server.stderr_text());
}

// A soft limit of 64 under a hard limit of 4096: --max-connections 200 fits once the soft limit is
// raised, and the server raises it (only as far as it needs), then holds 100 connections at once,
// more than 64 descriptors would allow.
TEST_CASE("faults: --max-connections above the soft descriptor limit raises it, up to the hard limit") {
  e2e::temp_dir tmp;
  e2e::server_process server({"--threads", "2", "--max-connections", "200"}, tmp.path,
                             {{RLIMIT_NOFILE, 64, 4096}});
  const auto port = server.port();
  const auto log = server.stderr_text();
  CHECK_MESSAGE(contains(log, "raised the open-file limit (RLIMIT_NOFILE) from 64 to"), log);
  const auto soft = open_files_soft_limit(server.pid());
  CHECK(soft > 200);
  CHECK(soft < 4096);
  CHECK(stats(port)["connections"]["max"].get<std::uint64_t>() == 200);
  std::vector<std::unique_ptr<client>> clients;
  clients.reserve(100);
  int served = 0;
  for (int i = 0; i < 100; ++i) {
    clients.push_back(std::make_unique<client>(port));
    served += clients.back()->exchange(get("/plaintext")).status == 200 ? 1 : 0;
  }
  CHECK(served == 100);
  CHECK(count_lines_with(server.stderr_text(), "accept:") == 0);  // never ran out
  clients.clear();
  const int code = server.stop();
  CHECK_MESSAGE(code == 0, "exit code ", code, "; stderr:\n", server.stderr_text());
}

// A build configured with -DPOOLS_TRACE=ON (server/CMakeLists.txt defines this for server_e2e).
#ifdef POOLS_E2E_TRACED_SERVERS
constexpr bool traced_servers = true;
#else
constexpr bool traced_servers = false;
#endif

// The server cannot start its threads: it must say so in one line and exit 1, not abort with a
// stack or hang. How the failure is made real: an address-space limit (RLIMIT_AS, 256 MiB) far
// below what 1,024 thread stacks need (RLIMIT_STACK set to 8 MiB, glibc's default stack size for a
// new thread: 8 GiB in all), so pthread_create fails with EAGAIN once the stacks have used up the
// address space, some 20 threads in, and std::thread throws std::system_error. (RLIMIT_NPROC
// would be the obvious limit, but the kernel does not enforce it for root, and CI runs as root.)
// Under ASan or TSan this cannot run: they reserve terabytes of address space at start-up, so no
// RLIMIT_AS lets the process start at all.
TEST_CASE("faults: threads that cannot start end the server with one line and exit code 1") {
  if (e2e::slowdown() > 1) {
    MESSAGE("skipped under sanitizers: they cannot start under an address-space limit");
    return;
  }
  if (contains(e2e::server_path(), "server_fixture")) {
    MESSAGE("skipped for the fixture driver: it starts no threads (--threads is ignored)");
    return;
  }
  if (traced_servers) {
    MESSAGE(
        "skipped: this build's servers record traces (POOLS_TRACE), whose rings allocate in noexcept hooks");
    return;
  }
  e2e::temp_dir tmp;
  const auto r =
      e2e::run_server_command({"--port", "0", "--threads", "1024"}, tmp.path, 10s,
                              {{RLIMIT_STACK, 8u << 20, 8u << 20}, {RLIMIT_AS, 256u << 20, 256u << 20}});
  CHECK_MESSAGE(r.exit_code == 1, "exit code ", r.exit_code, " (-1: still running after 10 s); output:\n",
                r.output);
  CHECK_MESSAGE(count_lines_with(r.output, " error: ") == 1, r.output);
  CHECK_MESSAGE(contains(r.output, "cannot start 1024 threads"), r.output);
  CHECK_MESSAGE(!contains(r.output, "terminate"), r.output);
  CHECK_MESSAGE(!contains(r.output, "listening on"), r.output);
}
