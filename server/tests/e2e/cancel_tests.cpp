// SPDX-License-Identifier: MIT
// End-to-end: a client that leaves while its job runs gets its job stopped (connection.hpp, "The
// client leaving"). A flood of clients that send /sleep?ms=10000 (or /busy) and close at once
// must free the server's capacity at once: every job ends, counted as cancelled in /stats, and a
// normal request is served as fast as before the flood. Without cancellation the futures server's
// two workers would sleep through the flood one by one (40 x 10 s / 2 = 200 s), and every other
// server would hold its jobs for the full 10 s; the bound here is 2 s (8 s under sanitizers).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "client.hpp"
#include "server_process.hpp"

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

nlohmann::json stats(unsigned short port) {
  const auto r = e2e::fetch(port, e2e::get("/stats"));
  REQUIRE(r.status == 200);
  return nlohmann::json::parse(r.body);
}

/// Connects, sends `request` whole, and closes at once (a FIN: nothing was received to reset).
void send_and_leave(unsigned short port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  ::close(fd);
}

/// Polls /stats until every job started has ended and `expected` of them were cancelled, or
/// `limit` passes. Returns how long that took, or nothing.
std::optional<std::chrono::milliseconds> wait_cancelled(unsigned short port, std::uint64_t expected,
                                                        clock_type::time_point since,
                                                        std::chrono::milliseconds limit) {
  std::uint64_t in_flight = 0, cancelled = 0;
  while (clock_type::now() - since < limit) {
    const auto s = stats(port);
    in_flight = s["jobs"]["in_flight"].get<std::uint64_t>();
    cancelled = s["jobs"]["cancelled"].get<std::uint64_t>();
    if (in_flight == 0 && cancelled >= expected)
      return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - since);
    std::this_thread::sleep_for(10ms);
  }
  MESSAGE(in_flight, " jobs still in flight, ", cancelled, " cancelled of ", expected);
  return std::nullopt;
}

}  // namespace

TEST_CASE("e2e: a flood of abandoned /sleep and /busy requests frees its capacity at once") {
  e2e::temp_dir tmp;
  e2e::server_process server({"--threads", "2"}, tmp.path);
  const auto port = server.port();
  const std::string nap = e2e::get("/sleep?ms=1");
  const auto baseline = e2e::timed([&] { REQUIRE(e2e::fetch(port, nap).status == 200); });
  const auto bound = std::chrono::milliseconds(2000) * e2e::slowdown();

  constexpr std::uint64_t flood = 40;
  const auto start = clock_type::now();
  for (std::uint64_t i = 0; i < flood; ++i) send_and_leave(port, e2e::get("/sleep?ms=10000"));
  const auto freed = wait_cancelled(port, flood, start, bound);
  REQUIRE_MESSAGE(freed.has_value(), "the abandoned sleeps still ran ", bound.count(), " ms after the flood");
  const auto after = e2e::timed([&] { REQUIRE(e2e::fetch(port, nap).status == 200); });
  MESSAGE(flood, " abandoned /sleep?ms=10000: all ended after ", freed->count(), " ms; /sleep?ms=1 took ",
          after.count(), " ms (", baseline.count(), " ms before the flood)");
  CHECK(after < std::chrono::milliseconds(500) * e2e::slowdown() + baseline);

  // /busy reads its token as it spins. The fixture runs a busy job inline on its only thread,
  // where nothing can see the client leave until it ends: by design, so not asked of it there.
  if (stats(port)["variant"] != "fixture") {
    constexpr std::uint64_t spinners = 10;
    const auto spin_start = clock_type::now();
    for (std::uint64_t i = 0; i < spinners; ++i) send_and_leave(port, e2e::get("/busy?ms=1000"));
    // 10 x 1 s of spinning on 2 threads is 5 s if nothing stops. A job already spinning on the
    // thread that would run its client's watch (the reactor's, or an idle worker's io_context)
    // can run to its end: at most one per thread is not cancelled.
    const auto spun = wait_cancelled(port, flood + spinners - 2, spin_start, bound);
    CHECK_MESSAGE(spun.has_value(), "the abandoned /busy jobs still ran ", bound.count(),
                  " ms after the flood");
  }

  // The server never wrote to the clients that left, and keeps serving the ones that stay.
  const auto s = stats(port);
  CHECK(s["requests"]["responses"].get<std::uint64_t>() < s["requests"]["total"].get<std::uint64_t>());
  CHECK(e2e::fetch(port, e2e::get("/plaintext")).status == 200);
  CHECK(server.stop() == 0);
}

TEST_CASE("e2e: a client that stays gets its /sleep answered while others leave") {
  e2e::temp_dir tmp;
  e2e::server_process server({"--threads", "2"}, tmp.path);
  const auto port = server.port();
  e2e::client stays(port);
  stays.send(e2e::get("/sleep?ms=300"));
  for (int i = 0; i < 20; ++i) send_and_leave(port, e2e::get("/sleep?ms=300"));
  const auto r = stays.read();
  CHECK(r.status == 200);
  CHECK(r.body == R"({"slept_ms":300})");
  CHECK(server.stop() == 0);
}
