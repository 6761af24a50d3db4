// SPDX-License-Identifier: MIT
// Request parsing and the limits: every status the protocol layer gives, fed as bytes.
#include <doctest/doctest.h>

#include <pools/server/options.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "uri.hpp"

using test::answers;
using test::get;
namespace srv = pools::server;

namespace {
srv::app make_app(std::uint64_t max_body = 1 << 20) {
  auto o = test::options();
  o.max_body = max_body;
  return srv::app(o, "test");
}

/// The one response to `input`, which must also close the connection (the stream is unusable).
test::response rejected(srv::app& app, const std::string& input, std::size_t step = std::string::npos) {
  test::driver d(app);
  d.send(input, step);
  if (d.last == srv::action::read) d.eof();  // lingering: the client goes away
  CHECK(d.closed);
  const auto rs = d.responses();
  REQUIRE(rs.size() == 1);
  CHECK_FALSE(rs[0].keep_alive);
  return rs[0];
}
}  // namespace

TEST_CASE("parser: a request in one piece, byte by byte, and after empty lines") {
  auto app = make_app();
  for (const std::size_t step : {std::string::npos, std::size_t{1}, std::size_t{7}}) {
    CAPTURE(step);
    const auto rs = answers(app, "\r\n" + get("/plaintext"), step);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].body == "Hello, World!");
  }
}

TEST_CASE("parser: malformed requests are 400 and close the connection") {
  auto app = make_app();
  for (const std::string& bad : std::vector<std::string>{
           std::string("GARBAGE\r\n\r\n"),
           std::string("GET /plaintext HTTP/1.1 extra\r\nHost: t\r\n\r\n"),
           std::string("GET /plaintext HTTP/1.10\r\nHost: t\r\n\r\n"),
           std::string("GET /plaintext HTTP/1.1\r\nHost t\r\n\r\n"),    // no colon
           std::string("GET /plaintext HTTP/1.1\r\nHo st: t\r\n\r\n"),  // space in a name
           std::string("GET /plaintext HTTP/1.1\r\n\r\n"),              // 1.1 without Host
           std::string("GET /plaintext HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
           std::string("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n"),
           std::string("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1x\r\n\r\nab"),
           std::string("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
       }) {
    CAPTURE(bad);
    const auto r = rejected(app, bad);
    CHECK(r.status == 400);
  }
}

TEST_CASE("parser: bad paths and percent-encoding answer 400 but keep the connection when framing is fine") {
  auto app = make_app();
  test::driver d(app);
  d.send(get("/%zz") + get("/a%00b") + "GET plaintext HTTP/1.1\r\nHost: t\r\n\r\n" + get("/plaintext"));
  const auto rs = d.responses();
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].status == 400);
  CHECK(rs[1].status == 400);
  CHECK(rs[2].status == 400);
  CHECK(rs[3].status == 200);
  CHECK_FALSE(d.closed);
}

TEST_CASE("parser: HTTP/1.0 needs no Host") {
  auto app = make_app();
  const auto rs = answers(app, "GET /plaintext HTTP/1.0\r\n\r\n");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 200);
}

TEST_CASE("parser: a request-target over 8 KiB is 414, at 8 KiB it is fine") {
  auto app = make_app();
  const std::string at_limit = "/plaintext?pad=" + std::string(srv::limits::max_target - 15, 'a');
  REQUIRE(at_limit.size() == srv::limits::max_target);
  auto rs = answers(app, get(at_limit));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 200);

  for (const std::size_t extra : {std::size_t{1}, std::size_t{100}, std::size_t{30000}}) {
    for (const std::size_t step : {std::string::npos, std::size_t{1000}}) {
      CAPTURE(extra);
      CAPTURE(step);
      const auto r = rejected(app, get(at_limit + std::string(extra, 'b')), step);
      CHECK(r.status == 414);
    }
  }
}

TEST_CASE("parser: a header section over 8 KiB is 431, just under it is fine") {
  auto app = make_app();
  // "Host: t\r\n" counts 1+4+4 = 9 bytes here; one X-Pad field fills the rest.
  const auto pad = [](std::size_t total) {
    return "X-Pad: " + std::string(total - 9 - (5 + 4), 'p') + "\r\n";  // name 5, value, ": " + CRLF
  };
  auto rs = answers(app, get("/plaintext", pad(srv::limits::max_header_fields)));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 200);

  for (const std::size_t step : {std::string::npos, std::size_t{512}}) {
    CAPTURE(step);
    CHECK(rejected(app, get("/plaintext", pad(srv::limits::max_header_fields + 1)), step).status == 431);
    // Far over the limit: Beast's own header limit trips first; still 431, not 414.
    std::string many;
    for (int i = 0; i < 400; ++i)
      many += "X-Field-" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
    CHECK(rejected(app, get("/plaintext", many), step).status == 431);
  }
}

TEST_CASE("parser: a body over --max-body is 413, by Content-Length or by chunks") {
  auto app = make_app(100);
  // Content-Length says too much: answered before the body is read.
  CHECK(rejected(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n").status == 413);
  CHECK(rejected(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999\r\n\r\n").status ==
        413);
  const std::string chunks =
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "32\r\n" +
      std::string(50, 'a') + "\r\n" + "33\r\n" + std::string(51, 'b') + "\r\n0\r\n\r\n";
  CHECK(rejected(app, chunks).status == 413);
  // At the limit it is accepted.
  const auto rs =
      answers(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x'));
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 200);
  CHECK(rs[0].body == std::string(100, 'x'));
}

TEST_CASE("parser: ambiguous body framing is 400 (no request smuggling)") {
  auto app = make_app();
  const std::string smuggled = get("/plaintext");
  for (const std::string& bad : std::vector<std::string>{
           // NOLINTNEXTLINE(bugprone-suspicious-missing-comma): each request is split over two lines
           "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: "
           "chunked\r\n\r\n0\r\n\r\n",
           "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: "
           "5\r\n\r\n0\r\n\r\n",
           "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
           "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 6\r\n\r\nhello!",
           "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n" + smuggled,
           "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked, gzip\r\n\r\n" + smuggled,
           "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
           "chunked\r\n\r\n0\r\n\r\n",
       }) {
    CAPTURE(bad);
    CHECK(rejected(app, bad + smuggled).status == 400);  // and the request behind it is never answered
  }
  // A repeated, identical Content-Length is one length (RFC 9110 8.6): accepted.
  const auto rs =
      answers(app, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].body == "ok");
}

TEST_CASE("parser: unknown and unsupported methods are 501, and the connection stays usable") {
  auto app = make_app();
  test::driver d(app);
  d.send(
      "BREW /pot HTTP/1.1\r\nHost: t\r\n\r\n"
      "PUT /plaintext HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
      "DELETE /plaintext HTTP/1.1\r\nHost: t\r\n\r\n" +
      get("/plaintext"));
  const auto rs = d.responses();
  REQUIRE(rs.size() == 4);
  CHECK(rs[0].status == 501);
  CHECK(rs[1].status == 501);
  CHECK(rs[2].status == 501);
  CHECK(rs[3].status == 200);
  CHECK_FALSE(d.closed);
}

TEST_CASE("parser: Expect: 100-continue gets an interim 100 before the body is sent") {
  auto app = make_app();
  test::driver d(app);
  d.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  auto rs = d.responses();
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 100);
  d.send("hello");
  rs = d.responses();
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].status == 200);
  CHECK(rs[1].body == "hello");
  // Over the limit: a final 413 instead, never a 100.
  auto small = make_app(2);
  const auto r =
      rejected(small, "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  CHECK(r.status == 413);
}

TEST_CASE(
    "parser: Expect: 100-continue on a pipelined request gets its 100 when its turn comes (RFC 9110 "
    "10.1.1)") {
  const std::string expecting =
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
  const auto count_100 = [](const std::vector<test::response>& rs) {
    return std::count_if(rs.begin(), rs.end(), [](const test::response& r) { return r.status == 100; });
  };
  SUBCASE("behind a ready response: after it, in the same write") {
    auto app = make_app();
    test::driver d(app);
    d.send(get("/plaintext") + expecting);
    auto rs = d.responses();
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].status == 200);
    CHECK(rs[1].status == 100);
    CHECK(d.write_sizes.size() == 1);
    d.send("hello");
    rs = d.responses();
    REQUIRE(rs.size() == 3);
    CHECK(rs[2].status == 200);
    CHECK(rs[2].body == "hello");
    CHECK(count_100(rs) == 1);
  }
  SUBCASE("behind a job: not before the job's response") {
    auto app = make_app();
    test::driver d(app, /*hold_jobs=*/true);
    d.send(get("/sleep?ms=5") + expecting);
    CHECK(d.written.empty());
    REQUIRE(d.held.size() == 1);
    d.complete(0);
    auto rs = d.responses();
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].body == R"({"slept_ms":5})");
    CHECK(rs[1].status == 100);
    d.send("hello");
    rs = d.responses();
    REQUIRE(rs.size() == 3);
    CHECK(rs[2].body == "hello");
  }
  SUBCASE("behind a file streamed in pieces: after its last byte") {
    test::temp_dir root;
    const std::string content(3 * srv::limits::file_chunk + 7, 'f');
    root.write("big.bin", content);
    auto o = test::options(root.path);
    srv::app app(o, "test");
    test::driver d(app);
    d.send(get("/static/big.bin") + expecting);
    auto rs = d.responses();
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].body == content);
    CHECK(rs[1].status == 100);
    d.send("hello");
    rs = d.responses();
    REQUIRE(rs.size() == 3);
    CHECK(rs[2].body == "hello");
  }
  SUBCASE("the body already sent with the header: no 100 is needed, none is sent") {
    auto app = make_app();
    const auto rs = answers(app, get("/plaintext") + expecting + "hello");
    REQUIRE(rs.size() == 2);
    CHECK(rs[1].body == "hello");
  }
}

TEST_CASE("parser: Host must be a valid uri-host [\":\" port], else 400 (RFC 9112 3.2, RFC 3986 3.2.2)") {
  auto app = make_app();
  for (const std::string& host : std::vector<std::string>{
           "t", "", "example.com", "example.com:8080", "host:", ":80", "127.0.0.1", "127.0.0.1:8080",
           "999.1.1.1",  // not an IPv4address, but a valid reg-name
           "[::1]", "[::1]:8080", "[2001:db8::7]:443", "[::ffff:192.0.2.1]", "[v7.a:b]", "[V1F.x]",
           "a-b_c~d.e", "a%41b", "!$&'()*+,;=", "xn--bcher-kva.example"}) {
    CAPTURE(host);
    const auto rs = answers(app, "GET /plaintext HTTP/1.1\r\nHost: " + host + "\r\n\r\n" + get("/json"));
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].status == 200);
    CHECK(rs[1].status == 200);
  }
  for (const std::string& host : std::vector<std::string>{
           "a/b",       "a b",  "a@b",    "user@host:80", "a?b",      "a#b",    "a\\b",    "a\"b",    "a<b",
           "a{b}",      "a^b",  "a|b",    "a`b",          "a:b",      "a:8o",   "a:-1",    "a:80:80", "a%zz",
           "a%4",       "a%",   "::1",    "[::1",         "::1]",     "[::1]x", "[::1]:x", "[::g]",   "[]",
           "[1.2.3.4]", "[v1]", "[vz.x]", "[v1.]",        "[v1.a/b]", "[::1]]", "\x80\x81"}) {
    CAPTURE(host);
    CHECK(rejected(app, "GET /plaintext HTTP/1.1\r\nHost: " + host + "\r\n\r\n" + get("/plaintext")).status ==
          400);
  }
  // HTTP/1.0 needs no Host, but one it sends must be valid too.
  CHECK(rejected(app, "GET /plaintext HTTP/1.0\r\nHost: a/b\r\n\r\n").status == 400);
  // Missing on HTTP/1.1, or more than one Host field line, even identical ones: 400.
  CHECK(rejected(app, "GET /plaintext HTTP/1.1\r\n\r\n").status == 400);
  CHECK(rejected(app, "GET /plaintext HTTP/1.1\r\nHost: t\r\nHost: t\r\n\r\n").status == 400);
}

TEST_CASE(
    "parser: a transfer coding other than chunked is 501 (RFC 9112 6.1); chunked not last is 400 (6.3)") {
  auto app = make_app();
  const std::string body = "5\r\nhello\r\n0\r\n\r\n";
  const auto with = [&](const std::string& te_lines) {
    return "POST /echo HTTP/1.1\r\nHost: t\r\n" + te_lines + "\r\n" + body + get("/plaintext");
  };
  for (const std::string& te : std::vector<std::string>{
           "Transfer-Encoding: gzip, chunked\r\n",
           "Transfer-Encoding: deflate,chunked\r\n",
           "Transfer-Encoding: GZIP , Chunked\r\n",
           "Transfer-Encoding: x-custom;level=1, chunked\r\n",
           "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",  // one list over two lines
           "Transfer-Encoding: identity, chunked\r\n",
       }) {
    CAPTURE(te);
    const auto r = rejected(app, with(te));
    CHECK(r.status == 501);
    CHECK(r.body.find("hello") == std::string::npos);  // never echoed undecoded
  }
  for (const std::string& te : std::vector<std::string>{
           "Transfer-Encoding: gzip\r\n",
           "Transfer-Encoding: chunked, gzip\r\n",
           "Transfer-Encoding: chunked, chunked\r\n",
           "Transfer-Encoding: gzip, chunked, chunked\r\n",
           "Transfer-Encoding: chunked;x=1\r\n",
           "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
           "Transfer-Encoding: \r\n",
           "Transfer-Encoding: ,\r\n",
       }) {
    CAPTURE(te);
    CHECK(rejected(app, with(te)).status == 400);
  }
  const auto rs = answers(app, with("Transfer-Encoding: chunked\r\n"));  // ", chunked" is fine on its own
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].body == "hello");
  CHECK(rs[1].status == 200);
}

TEST_CASE("parser: HTTP/1.x above 1.1 is served as HTTP/1.1 (RFC 9110 2.5); another major version is 505") {
  auto app = make_app();
  for (const std::size_t step : {std::string::npos, std::size_t{1}, std::size_t{7}}) {
    CAPTURE(step);
    test::driver d(app);
    d.send("GET /plaintext HTTP/1.2\r\nHost: t\r\n\r\n" +
               std::string("POST /echo HTTP/1.9\r\nHost: t\r\nContent-Length: 2\r\n\r\nok") + get("/json"),
           step);
    const auto rs = d.responses();
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].version == 11);
    CHECK(rs[0].keep_alive);
    CHECK(rs[1].body == "ok");
    CHECK(rs[1].version == 11);
    CHECK(rs[2].status == 200);
    CHECK_FALSE(d.closed);
  }
  // Served as 1.1, so it needs a Host like 1.1.
  CHECK(rejected(app, "GET /plaintext HTTP/1.2\r\n\r\n").status == 400);
  for (const std::string version : {"HTTP/2.0", "HTTP/3.0", "HTTP/2.1", "HTTP/9.9", "HTTP/0.9"}) {
    CAPTURE(version);
    const auto r = rejected(app, "GET /plaintext " + version + "\r\nHost: t\r\n\r\n" + get("/plaintext"));
    CHECK(r.status == 505);
    CHECK(r.version == 11);
  }
  for (const std::string line :
       {"GET /plaintext HTTP/1.10", "GET /plaintext HTTP/12.0", "GET /plaintext http/1.2",
        "GET /plaintext HTTP/1.2 x", "GET /plaintext HTTP/1.x", "GET /plaintext HTTP/2",
        "GET  /plaintext HTTP/1.2", "GET /a b HTTP/1.2", "GET /plaintext HTTP/2.0 "}) {
    CAPTURE(line);
    CHECK(rejected(app, std::string(line) + "\r\nHost: t\r\n\r\n").status == 400);
  }
}

TEST_CASE(
    "parser: a bare LF ending a chunk line or a header line is 400 at once, not a wait (RFC 9112 7.1, 2.2)") {
  auto app = make_app();
  const std::string chunked_post = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::size_t step : {std::string::npos, std::size_t{1}}) {
    CAPTURE(step);
    for (const std::string& bad : std::vector<std::string>{
             chunked_post + "5\nhello\n0\n\n",
             chunked_post + "5\r\nhello\r\n0\n\n",
             chunked_post + "5\r\nhello\r\n0\r\n\n",
             chunked_post + "5\r\nhello\n",
             chunked_post + "5;name=value\n",
             chunked_post + "5\r\nhello\r\n0\r\nX-Trailer: 1\n\r\n",
             "GET /plaintext HTTP/1.1\nHost: t\n\n",
             "GET /plaintext HTTP/1.1\r\nHost: t\n\r\n",
         }) {
      CAPTURE(bad);
      CHECK(rejected(app, bad, step).status == 400);
    }
    // CRLF split across reads is still CRLF.
    const auto rs =
        answers(app, chunked_post + "5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n" + get("/plaintext"), step);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].body == "hello");
    CHECK(rs[1].status == 200);
  }
}

TEST_CASE("parser: Transfer-Encoding on HTTP/1.0 is 400, even with Content-Length (RFC 9112 6.1)") {
  auto app = make_app();
  const std::string smuggled = get("/json");
  for (const std::size_t step : {std::string::npos, std::size_t{1}}) {
    CAPTURE(step);
    for (const std::string& bad : std::vector<std::string>{
             "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
             "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc",
         }) {
      CAPTURE(bad);
      CHECK(rejected(app, bad + smuggled, step).status == 400);  // and /json is never answered
    }
  }
}

TEST_CASE(
    "parser: an expectation other than 100-continue is 417; HTTP/1.0 expectations are ignored (RFC 9110 "
    "10.1.1)") {
  auto app = make_app();
  for (const std::string expect : {"pony", "100-continue, pony", "100-continueX", "a=b"}) {
    CAPTURE(expect);
    CHECK(rejected(app, get("/plaintext", "Expect: " + expect + "\r\n")).status == 417);
  }
  CHECK(rejected(app, get("/plaintext", "Expect: 100-continue\r\nExpect: pony\r\n")).status == 417);
  for (const std::string fields : {"Expect:\r\n", "Expect: 100-CONTINUE\r\n", "Expect: 100-continue, \r\n",
                                   "Expect: 100-continue\r\nExpect: 100-continue\r\n"}) {
    CAPTURE(fields);
    const auto rs = answers(app, get("/plaintext", fields));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
  }
  const auto rs = answers(app, "POST /echo HTTP/1.0\r\nContent-Length: 2\r\nExpect: pony\r\n\r\nok");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].status == 200);
  CHECK(rs[0].body == "ok");
}

TEST_CASE("parser: trailer fields are never merged into the header section (RFC 9110 6.5.1)") {
  auto app = make_app();
  const std::string request =
      "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: a/b\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n0\r\nContent-Type: evil/x\r\nHost: elsewhere\r\nExpect: pony\r\n\r\n";
  for (const std::size_t step : {std::string::npos, std::size_t{1}}) {
    CAPTURE(step);
    const auto rs = answers(app, request + get("/plaintext"), step);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].body == "abc");
    CHECK(rs[0].header("content-type") == "a/b");
    CHECK(rs[1].body == "Hello, World!");
  }
}

TEST_CASE(
    "parser: absolute-form targets, whatever the scheme's case, with or without a path (RFC 9112 3.2.2)") {
  namespace d = pools::server::detail;
  for (const std::string_view target :
       {"http://h/plaintext", "HTTP://h/plaintext", "Https://h:8/plaintext"}) {
    CAPTURE(target);
    const auto parts = d::split(target);
    REQUIRE(parts);
    CHECK(parts->path == "/plaintext");
    CHECK(parts->query.empty());
  }
  auto parts = d::split("http://h?n=5");
  REQUIRE(parts);
  CHECK(parts->path == "/");
  CHECK(parts->query == "n=5");
  parts = d::split("http://h");
  REQUIRE(parts);
  CHECK(parts->path == "/");
  parts = d::split("http://h/fib?n=5");
  REQUIRE(parts);
  CHECK(parts->path == "/fib");
  CHECK(parts->query == "n=5");
  CHECK_FALSE(d::split("http://h?n=5#frag"));
  CHECK_FALSE(d::split("ftp://h/plaintext"));
  CHECK_FALSE(d::split("h:80"));
  CHECK_FALSE(d::split("*"));
  auto app = make_app();
  const auto rs = answers(app, "GET HTTP://h/plaintext HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].body == "Hello, World!");
}
