// SPDX-License-Identifier: MIT
// The shared command line: defaults, every option, and the exit codes of bad usage.
#include <doctest/doctest.h>

#include <pools/server/cli.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

namespace srv = pools::server;

namespace {
const srv::program reactor{.name = "reactor", .summary = "callbacks", .strategies = {"per_thread", "shared"}};
const srv::program plain{.name = "plain", .summary = "no strategies"};

std::variant<srv::options, int> parse(const srv::program& p, std::vector<std::string> args) {
  args.insert(args.begin(), "server_" + std::string(p.name));
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return srv::parse_command_line(p, static_cast<int>(argv.size()), argv.data());
}

int exit_code(const srv::program& p, std::vector<std::string> args) {
  const auto r = parse(p, std::move(args));
  REQUIRE(std::holds_alternative<int>(r));
  return std::get<int>(r);
}

srv::options ok(const srv::program& p, std::vector<std::string> args) {
  const auto r = parse(p, std::move(args));
  REQUIRE(std::holds_alternative<srv::options>(r));
  return std::get<srv::options>(r);
}
}  // namespace

TEST_CASE("cli: defaults") {
  const auto o = ok(reactor, {});
  CHECK(o.port == 8080);
  CHECK(o.address == "127.0.0.1");
  CHECK(o.threads >= 1);
  CHECK(o.root.empty());
  CHECK(o.max_body == 1 << 20);
  CHECK(o.strategy == "per_thread");
  CHECK(o.max_connections == 10000);
  CHECK_FALSE(o.access_log);
  CHECK(ok(plain, {}).strategy.empty());
}

TEST_CASE("cli: every option") {
  test::temp_dir root;
  const auto o = ok(reactor, {"--port",
                              "0",
                              "--threads",
                              "4",
                              "--root",
                              root.path.string(),
                              "--max-body",
                              "123",
                              "--strategy",
                              "shared",
                              "--max-connections",
                              "7",
                              "--idle-timeout-ms",
                              "100",
                              "--header-timeout-ms",
                              "50",
                              "--shutdown-timeout-ms",
                              "0",
                              "--address",
                              "::1",
                              "--access-log"});
  CHECK(o.port == 0);
  CHECK(o.threads == 4);
  CHECK(o.root == std::filesystem::canonical(root.path));
  CHECK(o.max_body == 123);
  CHECK(o.strategy == "shared");
  CHECK(o.max_connections == 7);
  CHECK(o.idle_timeout == std::chrono::milliseconds(100));
  CHECK(o.header_timeout == std::chrono::milliseconds(50));
  CHECK(o.shutdown_timeout == std::chrono::milliseconds(0));
  CHECK(o.address == "::1");
  CHECK(o.access_log);
  CHECK(ok(reactor, {"--port=65535", "-t", "1"}).port == 65535);
}

TEST_CASE("cli: --queue-limit: default the connection cap, 0 unbounded, only where the driver has a queue") {
  const srv::program bounded{.name = "futures", .summary = "a queue", .bounded_queue = true};
  CHECK(ok(bounded, {}).queue_limit == 10000);
  CHECK(ok(bounded, {"--max-connections", "300"}).queue_limit == 300);
  CHECK(ok(bounded, {"--queue-limit", "7"}).queue_limit == 7);
  CHECK(ok(bounded, {"--queue-limit", "0"}).queue_limit == 0);
  CHECK(ok(bounded, {"--queue-limit", "10000000"}).queue_limit == 10000000);
  for (const auto* bad : {"-1", "10000001", "lots", ""}) {
    CAPTURE(bad);
    CHECK(exit_code(bounded, {"--queue-limit", bad}) == 2);
  }
  CHECK(exit_code(reactor, {"--queue-limit", "5"}) == 2);  // no queue to bound
}

TEST_CASE("cli: --help exits 0 and names the program and its strategies") {
  CHECK(exit_code(reactor, {"--help"}) == 0);
  const auto text = srv::usage(reactor);
  CHECK(text.find("server_reactor") != std::string::npos);
  CHECK(text.find("per_thread, shared") != std::string::npos);
  CHECK(text.find("--max-body") != std::string::npos);
}

TEST_CASE("cli: bad usage exits 2") {
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--port", "65536"},
           {"--port", "-1"},
           {"--port", "http"},
           {"--port"},
           {"--threads", "0"},
           {"--threads", "1025"},
           {"--threads", "-2"},
           {"--threads", "2x"},
           {"--max-body", "-1"},
           {"--max-body", "1073741825"},
           {"--max-connections", "0"},
           {"--idle-timeout-ms", "0"},
           {"--root", "/definitely/not/a/dir"},
           {"--root", "/etc/passwd"},
           {"--strategy", "nope"},
           {"--address", "localhost"},
           {"--address", "300.1.1.1"},
           {"--bogus"},
           {"positional"},
       }) {
    CAPTURE(bad.empty() ? std::string() : bad.front());
    CHECK(exit_code(reactor, bad) == 2);
  }
  CHECK(exit_code(plain, {"--strategy", "shared"}) == 2);
}
