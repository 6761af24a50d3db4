// SPDX-License-Identifier: MIT
// The hostile-request suite: what a client that does not play by the rules gets from a
// server_<name>, group by group, each grounded in the RFC 9110 / 9112 section named in its test
// case. Every case checks the status (and whether the connection is closed or still in step),
// then that the server still serves /plaintext to a new client; every server is stopped with
// SIGTERM and must exit 0. Where the RFCs leave a choice, the case follows what the server
// documents (server/README.md) and says which choice that is.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client.hpp"
#include "server_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using e2e::client;
using e2e::fetch;
using e2e::get;
using e2e::timed;

constexpr std::string_view secret = "TOP-SECRET, outside --root";

/// A server over a temporary --root that holds a file, a directory, a FIFO, a UNIX socket and
/// symlinks, next to a directory outside the root with a secret in it. The destructor stops the
/// server with SIGTERM and checks that it exits 0.
struct hostile {
  fs::path dir, root, outside;
  std::optional<e2e::server_process> server;
  int unix_socket = -1;

  explicit hostile(std::vector<std::string> extra = {}) {
    std::random_device rd;
    dir = fs::temp_directory_path() / fmt::format("pools_hostile_{}_{}", ::getpid(), rd());
    root = dir / "root";
    outside = dir / "outside";
    fs::create_directories(root / "sub");
    fs::create_directories(outside);
    write(root / "hello.txt", "hello, file\n");
    write(root / "sub" / "data.json", R"({"a":1})");
    write(outside / "secret.txt", secret);
    fs::create_symlink(outside / "secret.txt", root / "abs_link.txt");
    fs::create_symlink("../outside/secret.txt", root / "rel_link.txt");
    fs::create_directory_symlink(outside, root / "dir_link");
    fs::create_symlink("/dev/null", root / "null_link");
    fs::create_symlink("hello.txt", root / "inside_link.txt");  // stays under the root: served
    REQUIRE(::mkfifo((root / "fifo").c_str(), 0600) == 0);
    unix_socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(unix_socket >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const auto sock_path = (root / "sock").string();
    REQUIRE(sock_path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, sock_path.c_str(), sock_path.size() + 1);
    REQUIRE(::bind(unix_socket, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    std::vector<std::string> args{"--threads", "2", "--root", root.string(), "--max-body", "65536"};
    args.insert(args.end(), extra.begin(), extra.end());
    server.emplace(args, dir);
  }
  ~hostile() {
    if (server && server->running()) {
      const int code = server->stop();
      CHECK_MESSAGE(code == 0, "the server's exit code on SIGTERM was ", code, "; its stderr:\n",
                    server->stderr_text());
    }
    server.reset();
    // A server stuck in open() on the FIFO would have been killed above; release it anyway.
    const int writer = ::open((root / "fifo").c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
    if (unix_socket >= 0) ::close(unix_socket);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  hostile(const hostile&) = delete;
  hostile& operator=(const hostile&) = delete;

  static void write(const fs::path& p, std::string_view content) {
    std::ofstream out(p, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    REQUIRE(out.good());
  }

  unsigned short port() const { return server->port(); }

  /// A new client gets /plaintext: the server survived whatever came before.
  void serves_plaintext() const {
    const auto r = fetch(port(), get("/plaintext"));
    CHECK(r.status == 200);
    CHECK(r.body == "Hello, World!");
  }

  nlohmann::json stats() const {
    const auto r = fetch(port(), get("/stats"));
    REQUIRE(r.status == 200);
    return nlohmann::json::parse(r.body);
  }
};

/// One hostile request and what it must get.
struct verdict {
  std::string name;
  std::string request;
  int status;
  bool closes;            ///< answered, then the server closes: the stream cannot be trusted
  bool smuggle = false;   ///< a "GET /json" follows in the same write: answered only if !closes
  std::string body = {};  ///< when not empty: the response body
};
constexpr bool closes = true, kept = false;     // verdict::closes
constexpr bool smuggled = true, alone = false;  // verdict::smuggle

/// Sends `v.request` on a new connection and checks the verdict: the status; if the connection
/// closes, that nothing more is sent (a smuggled request is never answered); if it stays open,
/// that it is still in step (the smuggled request, then /plaintext, on the same connection).
/// Then a new client must get /plaintext.
void check(const hostile& h, const verdict& v) {
  CAPTURE(v.name);
  {
    client c(h.port());
    c.send(v.smuggle ? v.request + get("/json") : v.request);
    const auto r = c.read();
    CHECK(r.status == v.status);
    if (!v.body.empty()) CHECK(r.body == v.body);
    if (v.closes) {
      CHECK_FALSE(r.keep_alive);
      CHECK(c.closed_by_server(e2e::io_timeout()));
    } else {
      CHECK(r.keep_alive);
      if (v.smuggle) CHECK(c.read().body == R"({"message":"Hello, World!"})");
      CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");
    }
  }
  h.serves_plaintext();
}

void check_all(const hostile& h, const std::vector<verdict>& verdicts) {
  for (const auto& v : verdicts) check(h, v);
}

std::string with_host(std::string_view request_line, std::string_view fields = {}) {
  return fmt::format("{}\r\nHost: 127.0.0.1\r\n{}\r\n", request_line, fields);
}

std::string post_echo(std::string_view fields, std::string_view body, std::string_view version = "HTTP/1.1") {
  return fmt::format("POST /echo {}\r\nHost: 127.0.0.1\r\n{}\r\n{}", version, fields, body);
}

}  // namespace

// RFC 9112 §3 (request-line = method SP request-target SP HTTP-version, single SPs), §2.3
// (HTTP-version is case-sensitive), RFC 9110 §9.1 (methods are case-sensitive; an unknown method
// is 501). A malformed line cannot be framed: 400 and close. An unknown method is framed fine:
// 501, and the connection stays in step.
TEST_CASE("hostile: request line (RFC 9112 3, 2.3; RFC 9110 9.1)") {
  hostile h;
  check_all(
      h, {
             {"lowercase method", with_host("get /plaintext HTTP/1.1"), 501, kept},
             {"unknown method", with_host("PATCH /plaintext HTTP/1.1"), 501, kept},
             {"method of 10 KiB", with_host(std::string(10'000, 'G') + " /plaintext HTTP/1.1"), 501, kept},
             {"non-token byte in the method", with_host("GE(T /plaintext HTTP/1.1"), 400, closes},
             {"two SPs after the method", with_host("GET  /plaintext HTTP/1.1"), 400, closes},
             {"SP inside the target", with_host("GET /plain text HTTP/1.1"), 400, closes},
             {"HTAB as separator", with_host("GET\t/plaintext HTTP/1.1"), 400, closes},
             {"SP before the method", with_host(" GET /plaintext HTTP/1.1"), 400, closes},
             {"SP after the version", with_host("GET /plaintext HTTP/1.1 "), 400, closes},
             {"no version (no HTTP/0.9)", with_host("GET /plaintext"), 400, closes},
             {"lowercase version", with_host("GET /plaintext http/1.1"), 400, closes},
             {"version without minor", with_host("GET /plaintext HTTP/1"), 400, closes},
             {"NUL in the target", with_host(std::string("GET /plain\0text HTTP/1.1", 24)), 400, closes},
             {"target over 8 KiB", with_host("GET /plaintext?" + std::string(9000, 'a') + " HTTP/1.1"), 414,
              closes},
         });
}

// RFC 9112 §3.2: origin-form, absolute-form (§3.2.2: the server uses the target's authority and
// ignores Host; the scheme is case-insensitive, RFC 3986 §3.1), authority-form (only for
// CONNECT, §3.2.3) and asterisk-form (only for OPTIONS, §3.2.4). GET with a form it cannot use is
// 400; CONNECT and OPTIONS are not implemented (501). None of these breaks framing.
TEST_CASE("hostile: request-target forms (RFC 9112 3.2)") {
  hostile h;
  check_all(
      h,
      {
          {"absolute-form", with_host("GET http://127.0.0.1/plaintext HTTP/1.1"), 200, kept, alone,
           "Hello, World!"},
          {"absolute-form, another authority than Host",
           with_host("GET http://example.com:81/plaintext HTTP/1.1"), 200, kept, alone, "Hello, World!"},
          {"absolute-form, uppercase scheme", with_host("GET HTTP://127.0.0.1/plaintext HTTP/1.1"), 200, kept,
           alone, "Hello, World!"},
          {"absolute-form, query without path", with_host("GET http://127.0.0.1?x=1 HTTP/1.1"), 200, kept},
          {"absolute-form of another scheme", with_host("GET ftp://127.0.0.1/plaintext HTTP/1.1"), 400, kept},
          {"authority-form on GET", with_host("GET 127.0.0.1:80 HTTP/1.1"), 400, kept},
          {"CONNECT", with_host("CONNECT 127.0.0.1:80 HTTP/1.1"), 501, kept},
          {"asterisk-form on GET", with_host("GET * HTTP/1.1"), 400, kept},
          {"OPTIONS *", with_host("OPTIONS * HTTP/1.1"), 501, kept},
          {"relative path", with_host("GET plaintext HTTP/1.1"), 400, kept},
          {"fragment (never sent by clients)", with_host("GET /plaintext#top HTTP/1.1"), 400, kept},
      });
}

// RFC 9112 §5 (field-line = field-name ":" OWS field-value OWS; field-name is a token), §5.1 (no
// whitespace between name and colon: a server MUST reject with 400), §5.2 (obs-fold: reject or
// replace each fold by SP before interpreting; this server replaces, as Beast does, so no fold
// can start a new field), §2.2 (a whitespace-preceded line before the first field: reject),
// RFC 9110 §5.5 (CR, LF and NUL in a value are invalid and dangerous; other CTLs are not in the
// grammar; obs-text is), RFC 6585 §5 (431). All field errors close: the header cannot be trusted.
TEST_CASE("hostile: field syntax (RFC 9112 5, 5.1, 5.2, 2.2; RFC 9110 5.5)") {
  hostile h;
  std::string many_fields;
  for (int i = 0; i < 2000; ++i) many_fields += fmt::format("X-F{}: v\r\n", i);
  check_all(
      h,
      {
          {"SP before the colon", with_host("GET /plaintext HTTP/1.1", "X-A : b\r\n"), 400, closes},
          {"SP before the colon of Host", "GET /plaintext HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n", 400, closes},
          {"HTAB before the colon", with_host("GET /plaintext HTTP/1.1", "X-A\t: b\r\n"), 400, closes},
          {"whitespace line before the first field", "GET /plaintext HTTP/1.1\r\n X: y\r\nHost: a\r\n\r\n",
           400, closes},
          {"'(' in a field name", with_host("GET /plaintext HTTP/1.1", "X(A): b\r\n"), 400, closes},
          {"SP in a field name", with_host("GET /plaintext HTTP/1.1", "X A: b\r\n"), 400, closes},
          {"empty field name", with_host("GET /plaintext HTTP/1.1", ": b\r\n"), 400, closes},
          {"no colon", with_host("GET /plaintext HTTP/1.1", "X-A b\r\n"), 400, closes},
          {"NUL in a value", with_host("GET /plaintext HTTP/1.1", std::string("X-A: b\0c\r\n", 10)), 400,
           closes},
          {"CTL 0x01 in a value", with_host("GET /plaintext HTTP/1.1", "X-A: b\001c\r\n"), 400, closes},
          {"DEL in a value", with_host("GET /plaintext HTTP/1.1", "X-A: b\177c\r\n"), 400, closes},
          {"bare CR in a value", with_host("GET /plaintext HTTP/1.1", "X-A: b\rc\r\n"), 400, closes},
          {"obs-text in a value", with_host("GET /plaintext HTTP/1.1", "X-A: caf\xe9\r\n"), 200, kept, alone,
           "Hello, World!"},
          {"one field of 9 KiB",
           with_host("GET /plaintext HTTP/1.1", "X-A: " + std::string(9000, 'a') + "\r\n"), 431, closes},
          {"2,000 fields", with_host("GET /plaintext HTTP/1.1", many_fields), 431, closes},
      });
  // obs-fold: replaced by SP, so the folded line neither becomes a field of its own nor ends up in
  // a response (/echo answers with the request's Content-Type).
  {
    client c(h.port());
    const auto r =
        c.exchange(post_echo("Content-Type: text/plain\r\n X-Injected: yes\r\nContent-Length: 3\r\n", "abc"));
    CHECK(r.status == 200);
    CHECK(r.body == "abc");
    CHECK(r.header("content-type") == "text/plain X-Injected: yes");
    CHECK(r.header("x-injected").empty());
    CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");
  }
  h.serves_plaintext();
}

// RFC 9112 §6.1-6.3, RFC 9110 §8.6: the framing of a body, where request smuggling lives. Each
// request carries a second one ("GET /json") where a server that framed it differently would
// see a request. Ambiguous framing is 400 and close, and the second request is never answered;
// framing that is only unusual (identical Content-Lengths, OWS, case) is accepted and the second
// request is answered after the first, on the same connection.
TEST_CASE("hostile: Content-Length and Transfer-Encoding, smuggling (RFC 9112 6.1-6.3; RFC 9110 8.6)") {
  hostile h;
  const std::string chunked_abc = "3\r\nabc\r\n0\r\n\r\n";
  const auto cl = [](std::string_view value) { return fmt::format("Content-Length: {}\r\n", value); };
  check_all(
      h,
      {
          {"CL then TE", post_echo(cl("3") + "Transfer-Encoding: chunked\r\n", chunked_abc), 400, closes,
           smuggled},
          {"TE then CL", post_echo("Transfer-Encoding: chunked\r\n" + cl("3"), chunked_abc), 400, closes,
           smuggled},
          {"two different CLs", post_echo(cl("3") + cl("4"), "abcd"), 400, closes, smuggled},
          {"a CL list of different values", post_echo(cl("3, 4"), "abcd"), 400, closes, smuggled},
          {"CL with a sign +", post_echo(cl("+3"), "abc"), 400, closes, smuggled},
          {"CL negative", post_echo(cl("-3"), "abc"), 400, closes, smuggled},
          {"CL in hex", post_echo(cl("0x3"), "abc"), 400, closes, smuggled},
          {"CL with an inner space", post_echo(cl("3 4"), "abc"), 400, closes, smuggled},
          {"CL empty", post_echo(cl(""), "abc"), 400, closes, smuggled},
          {"CL beyond 64 bits", post_echo(cl("99999999999999999999999"), "abc"), 400, closes, smuggled},
          {"TE on HTTP/1.0", post_echo("Transfer-Encoding: chunked\r\n", chunked_abc, "HTTP/1.0"), 400,
           closes, smuggled},
          {"TE on HTTP/1.0 with keep-alive",
           post_echo("Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n", chunked_abc, "HTTP/1.0"),
           400, closes, smuggled},
          {"TE identity", post_echo("Transfer-Encoding: identity\r\n", chunked_abc), 400, closes, smuggled},
          {"TE xchunked", post_echo("Transfer-Encoding: xchunked\r\n", chunked_abc), 400, closes, smuggled},
          {"TE chunked twice",
           post_echo("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", chunked_abc), 400,
           closes, smuggled},
          {"TE folded into 'gzip chunked'", post_echo("Transfer-Encoding: gzip\r\n chunked\r\n", chunked_abc),
           400, closes, smuggled},
          {"identical CLs on two lines", post_echo(cl("3") + cl("3"), "abc"), 200, kept, smuggled, "abc"},
          {"identical CLs in a list", post_echo(cl("3, 3"), "abc"), 200, kept, smuggled, "abc"},
          {"CL with trailing OWS", post_echo(cl("3 "), "abc"), 200, kept, smuggled, "abc"},
          {"TE in upper case", post_echo("Transfer-Encoding: CHUNKED\r\n", chunked_abc), 200, kept, smuggled,
           "abc"},
          {"TE after an HTAB", post_echo("Transfer-Encoding:\tchunked\r\n", chunked_abc), 200, kept, smuggled,
           "abc"},
      });
}

// RFC 9112 §7.1 (chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF; chunk-size = 1*HEXDIG,
// recipients must guard against overflow), §7.1.1 (unknown chunk extensions are ignored), §7.1.2
// and RFC 9110 §6.5.1 (trailer fields are never merged into the header section: a trailer
// Content-Type does not become the request's, a trailer Host is not a second Host).
TEST_CASE("hostile: chunked bodies (RFC 9112 7.1, 7.1.1, 7.1.2; RFC 9110 6.5.1)") {
  hostile h;
  const auto chunked = [](std::string_view body, std::string_view fields = {}) {
    return post_echo(fmt::format("Transfer-Encoding: chunked\r\n{}", fields), body);
  };
  check_all(
      h,
      {
          {"chunk extensions", chunked("3;a=b\r\nabc\r\n2;x\r\nde\r\n0;last\r\n\r\n"), 200, kept, smuggled,
           "abcde"},
          {"quoted chunk extension", chunked("3;a=\"b c\"\r\nabc\r\n0\r\n\r\n"), 200, kept, smuggled, "abc"},
          {"size with 100 leading zeros", chunked(std::string(100, '0') + "3\r\nabc\r\n0\r\n\r\n"), 200, kept,
           smuggled, "abc"},
          {"trailer field", chunked("3\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n"), 200, kept, smuggled, "abc"},
          {"size beyond 64 bits", chunked("1ffffffffffffffff\r\nabc\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"size over --max-body", chunked("fffff\r\nabc\r\n0\r\n\r\n"), 413, closes, smuggled},
          {"negative size", chunked("-3\r\nabc\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"0x prefix", chunked("0x3\r\nabc\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"garbage size", chunked("zz\r\nabc\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"SP after the size", chunked("3 \r\nabc\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"data longer than its size", chunked("3\r\nabcd\r\n0\r\n\r\n"), 400, closes, smuggled},
          {"no CRLF after the data", chunked("3\r\nabc0\r\n\r\n"), 400, closes, smuggled},
          {"malformed trailer", chunked("3\r\nabc\r\n0\r\nX T: 1\r\n\r\n"), 400, closes, smuggled},
          {"Content-Length as a trailer", chunked("3\r\nabc\r\n0\r\nContent-Length: 10\r\n\r\n"), 400, closes,
           smuggled},
      });
  {
    client c(h.port());
    const auto r = c.exchange(chunked(
        "3\r\nabc\r\n0\r\nContent-Type: evil/trailer\r\nHost: elsewhere\r\n\r\n", "Content-Type: a/b\r\n"));
    CHECK(r.status == 200);
    CHECK(r.body == "abc");
    CHECK(r.header("content-type") == "a/b");
    CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");
  }
  h.serves_plaintext();
}

// RFC 9110 §10.1.1: 100-continue is the only expectation defined; "a server that receives an
// Expect field value containing a member other than 100-continue MAY respond with 417" — this
// server does, and closes (the body, if any, is not read). The token is case-insensitive, and an
// HTTP/1.0 request's expectation is ignored (MUST, for 100-continue).
TEST_CASE("hostile: Expect (RFC 9110 10.1.1)") {
  hostile h;
  check_all(
      h, {
             {"unknown expectation, with a body", post_echo("Content-Length: 3\r\nExpect: pony\r\n", "abc"),
              417, closes, smuggled},
             {"unknown expectation on GET", with_host("GET /plaintext HTTP/1.1", "Expect: teapot=1\r\n"), 417,
              closes, smuggled},
             {"100-continue and an unknown member",
              with_host("GET /plaintext HTTP/1.1", "Expect: 100-continue, x\r\n"), 417, closes, smuggled},
             {"an expectation on HTTP/1.0 is ignored",
              "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\nExpect: pony\r\n\r\nabc",
              200, kept, smuggled, "abc"},
             {"100-continue on HTTP/1.0: no 100",
              "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 3\r\nExpect: "
              "100-continue\r\n\r\nabc",
              200, kept, smuggled, "abc"},
             {"an empty Expect", with_host("GET /plaintext HTTP/1.1", "Expect:\r\n"), 200, kept, alone,
              "Hello, World!"},
         });
  {
    client c(h.port());
    c.send(post_echo("Content-Length: 3\r\nExpect: 100-Continue\r\n", ""));
    CHECK(c.read().status == 100);
    c.send("abc");
    const auto r = c.read();
    CHECK(r.status == 200);
    CHECK(r.body == "abc");
  }
  h.serves_plaintext();
}

// RFC 9112 §9.3.2: responses to pipelined requests go out in request order. An error that breaks
// framing comes after the responses to the requests before it, then the connection closes and
// nothing after it is answered (§9.6, close after the response); an error that does not break
// framing (404, a bad query) is one response among the others.
TEST_CASE("hostile: pipelining with an error in the middle (RFC 9112 9.3.2, 9.6)") {
  hostile h;
  const std::string plaintext = "Hello, World!", json = R"({"message":"Hello, World!"})";
  struct pipelined {
    std::string name, error_request;
    int status;
  };
  for (const auto& p : std::vector<pipelined>{
           {"garbage", "GARBAGE\r\n\r\n", 400},
           {"CL and TE", post_echo("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), 400},
           {"SP before a colon", with_host("GET /plaintext HTTP/1.1", "X-A : b\r\n"), 400},
           {"HTTP/2.0", with_host("GET /plaintext HTTP/2.0"), 505},
           {"unknown expectation", with_host("GET /plaintext HTTP/1.1", "Expect: pony\r\n"), 417},
       }) {
    CAPTURE(p.name);
    client c(h.port());
    c.send(get("/sleep?ms=30") + get("/plaintext") + "HEAD /json HTTP/1.1\r\nHost: x\r\n\r\n" +
           get("/fib?n=10") + p.error_request + get("/json") + get("/plaintext"));
    auto r = c.read();
    CHECK(r.status == 200);
    CHECK(r.body == R"({"slept_ms":30})");
    CHECK(c.read().body == plaintext);
    r = c.read(/*head=*/true);
    CHECK(r.status == 200);
    CHECK(r.header("content-length") == std::to_string(json.size()));
    CHECK(c.read().body == R"({"n":10,"fib":55})");
    r = c.read();
    CHECK(r.status == p.status);
    CHECK_FALSE(r.keep_alive);
    CHECK(c.closed_by_server(e2e::io_timeout()));
    h.serves_plaintext();
  }
  {
    client c(h.port());
    c.send(get("/plaintext") + get("/nope") + get("/fib?n=x") + "PATCH /json HTTP/1.1\r\nHost: x\r\n\r\n" +
           get("/echo") + get("/json"));
    for (const int status : {200, 404, 400, 501, 405}) CHECK(c.read().status == status);
    const auto r = c.read();
    CHECK(r.body == json);
    CHECK(r.keep_alive);
  }
  h.serves_plaintext();
}

// RFC 3986 §2.1 and §5.2.4, RFC 9110 §4.2.1: the path is percent-decoded once, and dot segments
// are never resolved against the file system: every encoding of "..", of "/" and of an absolute
// path is refused before the disk is touched, and whatever reaches the disk must stay under the
// root after realpath. Double encoding stays literal (%252e is the name "%2e"), a backslash and an
// overlong UTF-8 dot are ordinary name bytes, a NUL is a 400. The secret outside --root is never
// served, on any of them.
TEST_CASE("hostile: path traversal in every encoding (RFC 3986 2.1, 5.2.4; RFC 9110 4.2.1)") {
  hostile h;
  const std::string abs_secret = (h.outside / "secret.txt").string();
  std::string abs_encoded;
  for (const char ch : abs_secret) abs_encoded += ch == '/' ? std::string("%2F") : std::string(1, ch);
  const std::vector<std::string> targets{
      "/static/../outside/secret.txt",
      "/static/../../../../../../etc/passwd",
      "/static/sub/../../outside/secret.txt",
      "/static/./../outside/secret.txt",
      "/static/%2e%2e/outside/secret.txt",
      "/static/%2E%2E/outside/secret.txt",
      "/static/.%2e/outside/secret.txt",
      "/static/%2e./outside/secret.txt",
      "/static/..%2foutside%2fsecret.txt",
      "/static/%2e%2e%2foutside%2fsecret.txt",
      "/static/sub%2f..%2f..%2foutside%2fsecret.txt",
      "/static/%252e%252e/outside/secret.txt",
      "/static/%252e%252e%252foutside%252fsecret.txt",
      "/static/..\\outside\\secret.txt",
      "/static/..%5coutside%5csecret.txt",
      "/static/%c0%ae%c0%ae/outside/secret.txt",
      "/static/%c0%ae%c0%ae%c0%afoutside%c0%afsecret.txt",
      "/static/%e0%80%ae%e0%80%ae/outside/secret.txt",
      "/static/..;/outside/secret.txt",
      "/static/" + abs_secret,
      "/static/" + abs_encoded,
      "/static/%00/../outside/secret.txt",
      "/static/hello.txt%00.html",
      "/static/../outside/secret.txt%00",
      "/static/..%00/outside/secret.txt",
      "/%2e%2e/outside/secret.txt",
      "http://127.0.0.1/static/../outside/secret.txt",
      "/static/../root/../outside/secret.txt",
  };
  for (const auto& target : targets) {
    CAPTURE(target);
    client c(h.port());
    const auto r = c.exchange(get(target));
    CHECK((r.status == 404 || r.status == 400));
    CHECK(r.body.find(secret) == std::string::npos);
    CHECK(r.body.find("root:") == std::string::npos);
    CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");  // 400/404 here do not close
  }
  h.serves_plaintext();
  // The same names that are legitimate still work: a double-encoded name is a literal name.
  hostile::write(h.root / "%2e%2e", "literal percent name");
  CHECK(fetch(h.port(), get("/static/%252e%252e")).body == "literal percent name");
  CHECK(fetch(h.port(), get("/static/sub/data.json")).body == R"({"a":1})");
}

// Symlinks and special files under the root (nginx, too, serves regular files only): a symlink
// that resolves outside the root (absolute, relative, through a directory, to a device) is 404; a
// symlink that stays inside is followed; a directory, a FIFO (404 at once: its open must not
// wait for a writer) and a UNIX socket are 404.
TEST_CASE("hostile: symlinks out of the root and special files") {
  hostile h;
  check_all(
      h, {
             {"absolute symlink out", get("/static/abs_link.txt"), 404, kept},
             {"relative symlink out", get("/static/rel_link.txt"), 404, kept},
             {"through a symlinked directory", get("/static/dir_link/secret.txt"), 404, kept},
             {"symlink to /dev/null", get("/static/null_link"), 404, kept},
             {"FIFO", get("/static/fifo"), 404, kept},
             {"UNIX socket", get("/static/sock"), 404, kept},
             {"directory", get("/static/sub"), 404, kept},
             {"directory with a slash", get("/static/sub/"), 404, kept},
             {"the root itself", get("/static/"), 404, kept},
             {"symlink inside the root", get("/static/inside_link.txt"), 200, kept, alone, "hello, file\n"},
         });
}

// RFC 9110 §9.3.2: HEAD is GET without the content: the same status and header fields (Date
// aside), no body, and the connection stays in step, for every kind of response.
TEST_CASE("hostile: HEAD gets GET's headers and no body (RFC 9110 9.3.2)") {
  hostile h;
  for (const std::string target :
       {"/plaintext", "/json", "/", "/static/hello.txt", "/static/sub/data.json", "/fib?n=12", "/sleep?ms=1",
        "/busy?ms=1", "/nope", "/fib?n=x", "/echo", "/static/fifo"}) {
    CAPTURE(target);
    client c(h.port());
    auto got = c.exchange(get(target));
    auto headed = c.exchange("HEAD " + target + " HTTP/1.1\r\nHost: x\r\n\r\n", /*head=*/true);
    CHECK(headed.status == got.status);
    CHECK(headed.body.empty());
    got.headers.erase("date");
    headed.headers.erase("date");
    CHECK(headed.headers == got.headers);
    CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");  // still in step
  }
  // Pipelined HEADs between GETs: no body bytes may leak into the stream.
  client c(h.port());
  std::string burst;
  for (int i = 0; i < 10; ++i)
    burst += "HEAD /static/hello.txt HTTP/1.1\r\nHost: x\r\n\r\n" + get("/plaintext");
  c.send(burst);
  for (int i = 0; i < 10; ++i) {
    CHECK(c.read(true).header("content-length") == "12");
    CHECK(c.read().body == "Hello, World!");
  }
  h.serves_plaintext();
}

// RFC 9112 §9.5 (a server may close an idle connection; timeouts are the server's), RFC 9110
// §15.5.9 (408). The server's limits, from its command line: the whole header within
// --header-timeout-ms of its first byte (trickling does not extend it: 408, then close); an idle
// or stalled connection closes at --idle-timeout-ms (408 if a request had started, silently if
// not). Short limits keep the case fast; other clients are served meanwhile.
TEST_CASE("hostile: slow and silent clients (RFC 9112 9.5; RFC 9110 15.5.9)") {
  constexpr auto header_timeout = 600ms, idle_timeout = 900ms;
  hostile h({"--header-timeout-ms", std::to_string(header_timeout.count()), "--idle-timeout-ms",
             std::to_string(idle_timeout.count())});
  const auto upper = 3000ms * e2e::slowdown();

  // A byte per 100 ms until just before the header timeout: 408 at the timeout, counted from the
  // first byte (trickling does not extend it), though the request is not complete.
  {
    client c(h.port());
    const std::string request = get("/plaintext");
    const auto waited = timed([&] {
      const auto stop_sending = std::chrono::steady_clock::now() + header_timeout - 150ms;
      std::size_t sent = 0;
      while (std::chrono::steady_clock::now() < stop_sending) {
        c.send(request.substr(sent++, 1));
        std::this_thread::sleep_for(100ms);
      }
      CHECK(sent < request.size());
      const auto r = c.read();
      CHECK(r.status == 408);
      CHECK_FALSE(r.keep_alive);
    });
    CHECK(waited >= header_timeout - 50ms);
    CHECK(waited < upper);
    h.serves_plaintext();
  }
  // Silent clients: ten connect and say nothing; a working client is served meanwhile; each
  // silent one is closed without a byte at the idle timeout.
  {
    std::vector<std::unique_ptr<client>> silent;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) silent.push_back(std::make_unique<client>(h.port()));
    h.serves_plaintext();
    for (auto& c : silent) CHECK(c->closed_by_server(upper));
    const auto waited = std::chrono::steady_clock::now() - start;
    CHECK(waited >= idle_timeout - 100ms);
    CHECK(waited < upper);
    h.serves_plaintext();
  }
  struct stall {
    std::string name, bytes;
    std::chrono::milliseconds at_least;
  };
  for (const auto& s : std::vector<stall>{
           {"half a request line after a complete request", get("/plaintext") + "GET /plain", header_timeout},
           {"a body that stops", post_echo("Content-Length: 100\r\n", "ab"), idle_timeout},
           {"a chunked body without its final CRLF",
            post_echo("Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n"), idle_timeout},
       }) {
    CAPTURE(s.name);
    client c(h.port());
    const auto waited = timed([&] {
      c.send(s.bytes);
      auto r = c.read();
      if (s.bytes.starts_with("GET /plaintext")) r = c.read();  // the complete request's answer first
      CHECK(r.status == 408);
      CHECK(c.closed_by_server(upper));
    });
    CHECK(waited >= s.at_least - 100ms);
    CHECK(waited < upper);
    h.serves_plaintext();
  }
  CHECK(h.stats()["connections"]["timeouts"].get<int>() >= 14);
}

// A flood of connections, within the server's documented limit: past --max-connections a
// connection is answered 503 with Retry-After: 1 and closed (RFC 9110 §15.6.4, §10.2.3), while
// the ones within the cap, all open at once, are served.
TEST_CASE("hostile: a flood of connections past --max-connections gets 503 (RFC 9110 15.6.4, 10.2.3)") {
  constexpr int cap = 24, over = 12;
  hostile h({"--max-connections", std::to_string(cap)});
  {
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < cap + over; ++i) clients.push_back(std::make_unique<client>(h.port()));
    for (auto& c : clients) c->send(get("/plaintext"));
    int ok = 0, refused = 0;
    for (auto& c : clients) {
      const auto r = c->read();
      if (r.status == 200 && r.body == "Hello, World!") {
        ++ok;
      } else if (r.status == 503) {
        ++refused;
        CHECK(r.header("retry-after") == "1");
        CHECK_FALSE(r.keep_alive);
        CHECK(c->closed_by_server(e2e::io_timeout()));
      }
    }
    CHECK(ok == cap);
    CHECK(refused == over);
  }
  // Once they are gone, a new client is served (the cap counts open connections only).
  {
    const auto deadline = std::chrono::steady_clock::now() + e2e::io_timeout();
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      status = fetch(h.port(), get("/plaintext")).status;
      if (status == 200) break;
      std::this_thread::sleep_for(20ms);
    }
    CHECK(status == 200);
  }
  CHECK(h.stats()["connections"]["refused"].get<int>() >= over);
  h.serves_plaintext();
}

// Floods of requests: bursts of deep pipelines on several connections at once are all answered in
// order (RFC 9112 §9.3.2); connections reset by the peer (RST) mid-request or with a job in
// flight leave nothing behind: every session ends, and the server keeps serving.
TEST_CASE("hostile: pipelined bursts and connections reset by the peer (RFC 9112 9.3.2)") {
  hostile h;
  // Pipelined bursts: 8 connections, 400 requests each in one write, answered in order.
  {
    constexpr int conns = 8, depth = 400;
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < conns; ++i) {
      clients.push_back(std::make_unique<client>(h.port()));
      std::string burst;
      for (int k = 0; k < depth; ++k) {
        switch (k % 4) {
          case 0:
            burst += get("/plaintext");
            break;
          case 1:
            burst += get(fmt::format("/fib?n={}", k % 20));
            break;
          case 2:
            burst += "HEAD /json HTTP/1.1\r\nHost: x\r\n\r\n";
            break;
          default:
            burst += get("/static/hello.txt");
            break;
        }
      }
      clients.back()->send(burst);
    }
    int wrong = 0;
    for (auto& c : clients) {
      for (int k = 0; k < depth; ++k) {
        const auto r = c->read(k % 4 == 2);
        switch (k % 4) {
          case 0:
            wrong += r.body != "Hello, World!";
            break;
          case 1:
            wrong += r.body.find(fmt::format(R"("n":{},)", k % 20)) == std::string::npos;
            break;
          case 2:
            wrong += r.status != 200 || !r.body.empty();
            break;
          default:
            wrong += r.body != "hello, file\n";
            break;
        }
      }
    }
    CHECK(wrong == 0);
  }
  // Resets: 100 connections send part of a request, or a whole one with a job, and reset.
  for (int i = 0; i < 100; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(h.port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      const std::string bytes = i % 2 ? get("/sleep?ms=20") : std::string("GET /plaintext HTTP/1.1\r\nHo");
      [[maybe_unused]] const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      const linger hard{1, 0};  // close() sends RST
      ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    ::close(fd);
  }
  h.serves_plaintext();
  // Nothing is left open but the /stats request's own connection; a driver that counts its session
  // objects (reactor: pool.sessions_alive, reactor::counted) has freed all the others, so no
  // handler kept one alive (a shared_ptr cycle would).
  const auto deadline = std::chrono::steady_clock::now() + e2e::io_timeout();
  std::uint64_t open = 0, alive = 1;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto s = h.stats();
    open = s["connections"]["open"].get<std::uint64_t>();
    alive = s["pool"].value("sessions_alive", std::uint64_t{1});
    if (open == 1 && alive == 1) break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(open == 1);
  CHECK(alive == 1);
}
