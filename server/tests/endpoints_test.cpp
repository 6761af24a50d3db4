// SPDX-License-Identifier: MIT
// Every endpoint's answer, HEAD, 404/405, query validation, /stats.
#include <doctest/doctest.h>

#include <pools/server/log.hpp>
#include <pools/server/options.hpp>
#include <pools/server/work.hpp>

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "test_support.hpp"

using test::answers;
using test::get;
namespace srv = pools::server;

namespace {
test::response one(srv::app& app, const std::string& req, bool head = false) {
  const auto rs = answers(app, req, std::string::npos, {head});
  REQUIRE(rs.size() == 1);
  return rs[0];
}
srv::app make_app() {
  return srv::app(test::options(), "test");
}
}  // namespace

TEST_CASE("endpoints: /plaintext and /json are TechEmpower's, with Server and Date") {
  auto app = make_app();
  auto r = one(app, get("/plaintext"));
  CHECK(r.status == 200);
  CHECK(r.body == "Hello, World!");
  CHECK(r.header("content-type") == "text/plain");
  CHECK(r.header("content-length") == "13");
  CHECK(r.header("server") == "pools");
  // IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT" (checked by shape: std::regex trips a GCC
  // false -Wmaybe-uninitialized under ASan).
  const auto date = r.header("date");
  REQUIRE(date.size() == 29);
  CHECK(date.substr(3, 2) == ", ");
  CHECK(date.substr(25) == " GMT");
  CHECK(date[19] == ':');
  CHECK(date[22] == ':');
  r = one(app, get("/json"));
  CHECK(r.header("content-type") == "application/json");
  CHECK(nlohmann::json::parse(r.body) == nlohmann::json{{"message", "Hello, World!"}});
}

TEST_CASE("endpoints: / is a static HTML page of about 4 KiB") {
  auto app = make_app();
  const auto r = one(app, get("/"));
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/html; charset=utf-8");
  CHECK(r.body.starts_with("<!DOCTYPE html>"));
  CHECK(r.body.size() >= 3500);
  CHECK(r.body.size() <= 4600);
}

TEST_CASE(
    "endpoints: the target may be percent-encoded or absolute-form; the query is ignored where unused") {
  auto app = make_app();
  CHECK(one(app, get("/plain%74ext")).body == "Hello, World!");
  CHECK(one(app, get("http://example.com/plaintext")).body == "Hello, World!");
  CHECK(one(app, get("/plaintext?x=1&y")).body == "Hello, World!");
}

TEST_CASE("endpoints: HEAD answers the GET headers without a body") {
  auto app = make_app();
  auto r = one(app, "HEAD /plaintext HTTP/1.1\r\nHost: t\r\n\r\n", true);
  CHECK(r.status == 200);
  CHECK(r.header("content-length") == "13");
  CHECK(r.body.empty());
  r = one(app, "HEAD /fib?n=10 HTTP/1.1\r\nHost: t\r\n\r\n", true);
  CHECK(r.status == 200);
  CHECK(r.header("content-length") == std::to_string(std::string(R"({"n":10,"fib":55})").size()));
  // Followed by a GET on the same connection: the byte stream stays in step.
  const auto rs = answers(app, "HEAD / HTTP/1.1\r\nHost: t\r\n\r\n" + get("/plaintext"), std::string::npos,
                          {true, false});
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].body == "Hello, World!");
}

TEST_CASE("endpoints: unknown paths are 404, wrong methods 405 with Allow") {
  auto app = make_app();
  CHECK(one(app, get("/nope")).status == 404);
  CHECK(one(app, get("/plaintext/")).status == 404);
  CHECK(one(app, get("/static")).status == 404);
  auto r = one(app, "POST /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "GET, HEAD");
  r = one(app, get("/echo"));
  CHECK(r.status == 405);
  CHECK(r.header("allow") == "POST");
}

TEST_CASE("endpoints: /fib validates n and hands fib(n) to the driver") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/fib?n=0") + get("/fib?n=35") + get("/fib?x=1&n=%32%30"));
  REQUIRE(d.held.size() == 3);
  CHECK(d.held[0].what == srv::job::kind::fib);
  CHECK(d.held[0].arg == 0);
  CHECK(d.held[1].arg == srv::limits::max_fib_n);
  CHECK(d.held[2].arg == 20);
  for (std::size_t i = 0; i < 3; ++i) d.complete(i);
  const auto rs = d.responses();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].body == R"({"n":0,"fib":0})");
  CHECK(rs[1].body == R"({"n":35,"fib":9227465})");
  CHECK(rs[2].body == R"({"n":20,"fib":6765})");

  for (const std::string& bad : std::vector<std::string>{
           "/fib", "/fib?n=", "/fib?n=-1", "/fib?n=abc", "/fib?n=36", "/fib?n=1e3", "/fib?n=+1",
           "/fib?n=%2B1", "/fib?n=1%20", "/fib?n=99999999999999999999999999", "/fib?n=%zz",
           "/fib?n=18446744073709551616"}) {
    CAPTURE(bad);
    const auto r = one(app, get(bad));
    CHECK(r.status == 400);
    CHECK(r.keep_alive);  // a bad value is the client's mistake, not a broken stream
  }
}

TEST_CASE("endpoints: /busy takes ms or draws 10..20 ms; /sleep needs ms") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  std::string burst = get("/busy?ms=7") + get("/sleep?ms=15");
  for (int i = 0; i < 40; ++i) burst += get("/busy");
  d.send(burst);
  REQUIRE(d.held.size() == 42);
  CHECK(d.held[0].what == srv::job::kind::busy);
  CHECK(d.held[0].arg == 7);
  CHECK(d.held[1].what == srv::job::kind::sleep);
  CHECK(d.held[1].duration() == std::chrono::milliseconds(15));
  std::set<std::uint64_t> drawn;
  for (std::size_t i = 2; i < d.held.size(); ++i) {
    CHECK(d.held[i].arg >= srv::limits::busy_default_min_ms);
    CHECK(d.held[i].arg <= srv::limits::busy_default_max_ms);
    drawn.insert(d.held[i].arg);
  }
  CHECK(drawn.size() > 1);
  for (const std::string& bad :
       std::vector<std::string>{"/busy?ms=-5", "/busy?ms=1001", "/busy?ms=x", "/sleep",
                                "/sleep?ms=", "/sleep?ms=10001", "/sleep?ms=-1"}) {
    CAPTURE(bad);
    CHECK(one(app, get(bad)).status == 400);
  }
}

TEST_CASE("endpoints: /busy actually spins and fib_serial agrees with fib_expected") {
  const auto start = std::chrono::steady_clock::now();
  srv::busy_wait(std::chrono::milliseconds(5));
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(5));
  for (std::uint64_t n = 0; n <= 25; ++n) CHECK(srv::fib_serial(n) == srv::fib_expected(n));
  CHECK(srv::fib_expected(93) == 12200160415121876738ull);
}

TEST_CASE("endpoints: POST /echo returns the body, by Content-Length or chunked, with its Content-Type") {
  auto app = make_app();
  std::string binary(3000, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>(i * 7);
  auto r = one(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/x-test\r\nContent-Length: " +
                        std::to_string(binary.size()) + "\r\n\r\n" + binary);
  CHECK(r.status == 200);
  CHECK(r.body == binary);
  CHECK(r.header("content-type") == "application/x-test");

  r = one(app,
          "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
          "5\r\nhello\r\n1;ext=1\r\n,\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
  CHECK(r.body == "hello, world");
  CHECK(r.header("content-type") == "application/octet-stream");

  r = one(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
  CHECK(r.status == 200);
  CHECK(r.body.empty());

  // Byte by byte, chunked, followed by a pipelined request.
  const auto rs =
      answers(app,
              "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
                  get("/plaintext"),
              1);
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].body == "abc");
  CHECK(rs[1].body == "Hello, World!");
}

TEST_CASE("endpoints: /stats reports connections, requests, jobs and the driver's pool counters") {
  auto o = test::options();
  o.strategy = "shared";
  o.threads = 3;
  srv::app app(o, "demo");
  app.set_pool_stats([] { return std::vector<srv::pool_stat>{{"tasks", 42}, {"steals", 7}}; });
  test::driver other(app);
  other.send(get("/plaintext") + get("/nope"));
  const auto r = one(app, get("/stats"));
  CHECK(r.header("content-type") == "application/json");
  const auto j = nlohmann::json::parse(r.body);
  CHECK(j["variant"] == "demo");
  CHECK(j["strategy"] == "shared");
  CHECK(j["threads"] == 3);
  CHECK(j["connections"]["open"] == 2);
  CHECK(j["connections"]["accepted"] == 2);
  CHECK(j["requests"]["total"] == 3);
  CHECK(j["requests"]["responses"] == 2);
  CHECK(j["requests"]["in_flight"] == 1);  // the /stats request itself
  CHECK(j["requests"]["status_4xx"] == 1);
  CHECK(j["pool"]["tasks"] == 42);
  CHECK(j["pool"]["steals"] == 7);
}

TEST_CASE("endpoints: every response carries the access-log fields when --access-log is on") {
  auto o = test::options();
  o.access_log = true;
  srv::app app(o, "test");
  CHECK(one(app, get("/plaintext")).status == 200);  // logs a line; the format is checked below
  const auto line =
      srv::access_log_line("127.0.0.1:5", "GET", "/x", 11, 200, 13, std::chrono::microseconds(42));
  CHECK(line == R"(127.0.0.1:5 "GET /x HTTP/1.1" 200 13 42us)");
}
