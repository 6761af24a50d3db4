// SPDX-License-Identifier: MIT
// End-to-end tests of one server_<name> executable, whatever its driver: a real process on an
// ephemeral port, real sockets, a Beast client (and curl where installed). Every test case starts
// its own server and checks that it exits 0 on SIGTERM, so a crash, a sanitizer report or a hang
// in any driver fails the case that caused it.
#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "client.hpp"
#include "server_process.hpp"

namespace {

namespace fs = std::filesystem;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using namespace std::chrono_literals;
using e2e::client;
using e2e::fetch;
using e2e::get;
using e2e::temp_dir;
using e2e::timed;

void write_file(const fs::path& p, std::string_view content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  REQUIRE(out.good());
}

/// Byte i of a generated file: a prime period, so no piece boundary lines up with it.
char pattern(std::uint64_t i) {
  return static_cast<char>('0' + i % 251 % 64);
}

std::string patterned(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = pattern(i);
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A running server with a --root of known files (and one outside it, with symlinks pointing
/// out). The destructor stops it with SIGTERM and checks the exit code is 0.
struct fixture {
  temp_dir tmp;
  fs::path root = tmp.path / "root";
  fs::path outside = tmp.path / "outside";
  std::optional<e2e::server_process> server;

  explicit fixture(std::vector<std::string> extra = {}) {
    write_file(root / "hello.txt", "hello, file\n");
    write_file(root / "page.html", "<!DOCTYPE html><p>hi</p>");
    write_file(root / "style.css", "p { color: red }");
    write_file(root / "sub" / "data.json", R"({"a":1})");
    write_file(root / "blob.bin", patterned(100'000));
    write_file(outside / "secret.txt", "do not serve");
    fs::create_symlink(outside / "secret.txt", root / "evil.txt");
    fs::create_directory_symlink(outside, root / "evil_dir");
    std::vector<std::string> args{"--threads", "2", "--root", root.string(), "--max-body", "4194304"};
    args.insert(args.end(), extra.begin(), extra.end());
    server.emplace(args, tmp.path);
  }
  ~fixture() {
    if (server && server->running()) {
      const int code = server->stop();
      CHECK_MESSAGE(code == 0, "the server's exit code on SIGTERM was ", code, "; its stderr:\n",
                    server->stderr_text());
    }
  }
  unsigned short port() const { return server->port(); }

  nlohmann::json stats() const {
    const auto r = fetch(port(), get("/stats"));
    REQUIRE(r.status == 200);
    return nlohmann::json::parse(r.body);
  }

  /// Polls /stats until at least `n` requests are in flight (the polling /stats request counts
  /// as one), or io_timeout() passes; REQUIREs that they were reached.
  void wait_in_flight(std::uint64_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + e2e::io_timeout();
    std::uint64_t in_flight = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      in_flight = stats()["requests"]["in_flight"].get<std::uint64_t>();
      if (in_flight >= n) break;
      std::this_thread::sleep_for(10ms);
    }
    REQUIRE_MESSAGE(in_flight >= n, in_flight, " requests in flight, waited for ", n);
  }
};

std::string chunked(std::string_view body, std::size_t piece) {
  std::string out;
  for (std::size_t i = 0; i < body.size(); i += piece) {
    const auto part = body.substr(i, piece);
    out += fmt::format("{:x}\r\n", part.size());
    out.append(part).append("\r\n");
  }
  return out + "0\r\n\r\n";
}

std::string post(std::string_view target, std::string_view body, std::string_view extra = {}) {
  return fmt::format("POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n{}\r\n", target,
                     body.size(), extra) +
         std::string(body);
}

}  // namespace

TEST_CASE("e2e: every endpoint") {
  fixture f;
  const auto port = f.port();

  auto r = fetch(port, get("/plaintext"));
  CHECK(r.status == 200);
  CHECK(r.body == "Hello, World!");
  CHECK(r.header("content-type") == "text/plain");
  CHECK(r.header("server") == "pools");
  CHECK_FALSE(r.header("date").empty());

  r = fetch(port, get("/json"));
  CHECK(r.header("content-type") == "application/json");
  CHECK(nlohmann::json::parse(r.body) == nlohmann::json{{"message", "Hello, World!"}});

  r = fetch(port, get("/"));
  CHECK(r.header("content-type") == "text/html; charset=utf-8");
  CHECK(r.body.starts_with("<!DOCTYPE html>"));
  CHECK(r.body.size() >= 3500);

  r = fetch(port, get("/fib?n=20"));
  CHECK(r.status == 200);
  CHECK(r.body == R"({"n":20,"fib":6765})");
  CHECK(fetch(port, get("/fib?n=1")).body == R"({"n":1,"fib":1})");

  CHECK(timed([&] { CHECK(fetch(port, get("/busy?ms=5")).body == R"({"busy_ms":5})"); }) >= 5ms);
  CHECK(timed([&] { CHECK(fetch(port, get("/busy")).status == 200); }) >= 10ms);
  CHECK(timed([&] { CHECK(fetch(port, get("/sleep?ms=50")).body == R"({"slept_ms":50})"); }) >= 50ms);

  std::string body(100'000, '\0');
  std::mt19937 rng(7);
  for (auto& c : body) c = static_cast<char>(rng());
  r = fetch(port, post("/echo", body, "Content-Type: application/x-test\r\n"));
  CHECK(r.status == 200);
  CHECK(r.body == body);
  CHECK(r.header("content-type") == "application/x-test");
  r = fetch(port, "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
                      chunked(body, 4000));
  CHECK(r.body == body);

  {
    client c(port);
    r = c.exchange("HEAD /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", /*head=*/true);
    CHECK(r.status == 200);
    CHECK(r.header("content-length") == "13");
    CHECK(r.body.empty());
    r = c.exchange("HEAD /static/hello.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", true);
    CHECK(r.header("content-length") == "12");
    CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");  // still in step after HEADs
  }

  struct file_case {
    std::string target, type, body;
  };
  for (const auto& fc : std::vector<file_case>{
           {"/static/hello.txt", "text/plain; charset=utf-8", "hello, file\n"},
           {"/static/page.html", "text/html; charset=utf-8", "<!DOCTYPE html><p>hi</p>"},
           {"/static/style.css", "text/css; charset=utf-8", "p { color: red }"},
           {"/static/sub/data.json", "application/json", R"({"a":1})"},
           {"/static/blob.bin", "application/octet-stream", patterned(100'000)},
       }) {
    CAPTURE(fc.target);
    r = fetch(port, get(fc.target));
    CHECK(r.status == 200);
    CHECK(r.header("content-type") == fc.type);
    CHECK(r.body == fc.body);
  }

  const auto s = f.stats();
  CHECK(s["variant"].is_string());
  CHECK(s["threads"] == 2);
  CHECK(s["connections"]["open"].get<int>() >= 1);
  CHECK(s["connections"]["accepted"].get<int>() >= 15);
  CHECK(s["requests"]["total"].get<int>() >= 15);
  CHECK(s["jobs"]["started"].get<int>() >= 5);
  CHECK(s["pool"].is_object());
}

TEST_CASE("e2e: a 100 MiB static file is streamed, never held in memory") {
  fixture f;
  // Sanitized builds stream a 48 MiB file: ThreadSanitizer makes 100 MiB take minutes. It stays
  // above the 32 MiB bound below, so a server that buffered the file would still fail the check.
  const std::size_t size = e2e::slowdown() > 1 ? std::size_t{48} << 20 : std::size_t{100} << 20;
  {
    std::ofstream out(f.root / "big.bin", std::ios::binary);
    std::string block(1 << 20, '\0');
    for (std::size_t off = 0; off < size; off += block.size()) {
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = pattern(off + i);
      out.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    REQUIRE(out.good());
  }
  const long before = f.server->peak_rss_kib();
  client c(f.port());
  c.send(get("/static/big.bin"));
  const auto r = c.read(false, size + 1);
  REQUIRE(r.status == 200);
  CHECK(r.header("content-length") == std::to_string(size));
  REQUIRE(r.body.size() == size);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < size; ++i) wrong += r.body[i] != pattern(i);
  CHECK(wrong == 0);
  const long after = f.server->peak_rss_kib();
  CHECK_MESSAGE(after - before < 32 * 1024, "the server's peak RSS grew by ", after - before, " KiB");
  CHECK(c.exchange(get("/plaintext")).status == 200);
}

TEST_CASE("e2e: every error status, and the server keeps serving") {
  fixture f;
  struct error_case {
    std::string name, request;
    int status;
    bool closes;  // the stream is unusable after it: answered, then closed
  };
  const std::string long_uri = "/plaintext?x=" + std::string(9000, 'u');
  std::string big_header;
  for (int i = 0; i < 100; ++i) big_header += fmt::format("X-H{}: {}\r\n", i, std::string(90, 'h'));
  const auto outside = f.outside.filename().string();
  const std::vector<error_case> cases{
      {"garbage", "GARBAGE\r\n\r\n", 400, true},
      {"1.1 without Host", "GET /plaintext HTTP/1.1\r\n\r\n", 400, true},
      {"bad version", "GET /plaintext HTTP/1.x\r\nHost: x\r\n\r\n", 400, true},
      {"HTTP/3.0", "GET /plaintext HTTP/3.0\r\nHost: x\r\n\r\n", 505, true},
      {"header section > 8 KiB", get("/plaintext", big_header), 431, true},
      {"URI > 8 KiB", get(long_uri), 414, true},
      {"body > --max-body", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n", 413, true},
      {"chunk > --max-body", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n500000\r\n",
       413, true},
      {"Content-Length and Transfer-Encoding",
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400, true},
      {"conflicting Content-Length",
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400, true},
      {"Transfer-Encoding gzip",
       "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n" + get("/json"), 400, true},
      {"bad chunk", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", 400, true},
      {"unknown method", "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 501, false},
      {"unsupported method", "PUT /plaintext HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx", 501, false},
      {"unknown path", get("/nope"), 404, false},
      {"wrong method", get("/echo"), 405, false},
      {"dot-dot", get("/static/../" + outside + "/secret.txt"), 404, false},
      {"encoded dot-dot", get("/static/%2e%2e/" + outside + "/secret.txt"), 404, false},
      {"encoded dot-dot slash", get("/static/%2E%2E%2F" + outside + "%2Fsecret.txt"), 404, false},
      {"absolute", get("/static//etc/passwd"), 404, false},
      {"absolute, encoded", get("/static/%2Fetc%2Fpasswd"), 404, false},
      {"symlink out", get("/static/evil.txt"), 404, false},
      {"symlinked dir out", get("/static/evil_dir/secret.txt"), 404, false},
      {"directory", get("/static/sub"), 404, false},
      {"fib n=-1", get("/fib?n=-1"), 400, false},
      {"fib n=abc", get("/fib?n=abc"), 400, false},
      {"fib huge n", get("/fib?n=100000000000000000000000"), 400, false},
      {"fib n=36", get("/fib?n=36"), 400, false},
      {"busy ms=-1", get("/busy?ms=-1"), 400, false},
      {"sleep ms=x", get("/sleep?ms=x"), 400, false},
      {"bad escape", get("/%zz"), 400, false},
  };
  for (const auto& ec : cases) {
    CAPTURE(ec.name);
    client c(f.port());
    c.send(ec.request);
    const auto r = c.read();
    CHECK(r.status == ec.status);
    if (ec.closes) {
      CHECK_FALSE(r.keep_alive);
      CHECK(c.closed_by_server(e2e::io_timeout()));
    } else {
      CHECK(c.exchange(get("/plaintext")).body == "Hello, World!");
    }
  }
  CHECK(fetch(f.port(), get("/plaintext")).status == 200);
  const auto s = f.stats();
  CHECK(s["requests"]["status_4xx"].get<std::size_t>() + s["requests"]["status_5xx"].get<std::size_t>() >=
        cases.size());
}

namespace {
/// Sends `request` on a fresh connection: the one response must have `status`, say close, and the
/// server must close; then another client still gets /plaintext.
void rejected(const fixture& f, const std::string& request, int status) {
  {
    client c(f.port());
    c.send(request);
    const auto r = c.read();
    CHECK(r.status == status);
    CHECK_FALSE(r.keep_alive);
    CHECK(c.closed_by_server(e2e::io_timeout()));
  }
  CHECK(fetch(f.port(), get("/plaintext")).body == "Hello, World!");
}
}  // namespace

// Only regular files are served; nginx answers 404 for anything else under its root. A FIFO
// opened without O_NONBLOCK blocks the opening thread until a writer comes.
TEST_CASE("e2e: a FIFO under --root is 404 at once, and blocks nobody meanwhile") {
  fixture f;
  const auto fifo = f.root / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  struct release {  // a server stuck in open() is released at the end, so that it can still stop
    fs::path path;
    ~release() {
      const int writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (writer >= 0) ::close(writer);
    }
  } guard{fifo};
  client a(f.port());
  a.send(get("/static/pipe"));
  for (int i = 0; i < 4; ++i) CHECK(fetch(f.port(), get("/plaintext")).body == "Hello, World!");
  CHECK(a.read().status == 404);
  CHECK(a.exchange(get("/plaintext")).body == "Hello, World!");
}

TEST_CASE(
    "e2e: Expect: 100-continue on a pipelined request gets its 100 after the earlier responses (RFC 9110 "
    "10.1.1)") {
  fixture f;
  const std::string expecting =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n";
  for (const std::string& first : {get("/plaintext"), get("/sleep?ms=20"), get("/static/blob.bin")}) {
    CAPTURE(first);
    client c(f.port());
    c.send(first + expecting);
    CHECK(c.read().status == 200);
    CHECK(c.read().status == 100);
    c.send("hello");
    const auto r = c.read();
    CHECK(r.status == 200);
    CHECK(r.body == "hello");
    CHECK(fetch(f.port(), get("/plaintext")).body == "Hello, World!");
  }
}

TEST_CASE("e2e: an invalid, missing or repeated Host is 400 (RFC 9112 3.2, RFC 3986 3.2.2)") {
  fixture f;
  for (const std::string host : {"Host: a/b\r\n", "Host: a@b\r\n", "Host: a b\r\n", "Host: [::1\r\n",
                                 "Host: a:8o\r\n", "", "Host: a\r\nHost: a\r\n", "Host: a\r\nHost: b\r\n"}) {
    CAPTURE(host);
    rejected(f, "GET /plaintext HTTP/1.1\r\n" + host + "\r\n" + get("/json"), 400);
  }
  for (const std::string host :
       {"Host: example.com:8080\r\n", "Host: [::1]:80\r\n", "Host: 127.0.0.1\r\n", "Host: \r\n"}) {
    CAPTURE(host);
    CHECK(fetch(f.port(), "GET /plaintext HTTP/1.1\r\n" + host + "\r\n").status == 200);
  }
}

TEST_CASE("e2e: a transfer coding other than chunked is 501 (RFC 9112 6.1); chunked not last is 400 (6.3)") {
  fixture f;
  const auto with = [](std::string_view te) {
    return fmt::format(
               "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: {}\r\n\r\n5\r\nhello\r\n0\r\n\r\n", te) +
           get("/json");
  };
  rejected(f, with("gzip, chunked"), 501);
  rejected(f, with("deflate, chunked"), 501);
  rejected(f, with("chunked, gzip"), 400);
  rejected(f, with("gzip"), 400);
}

TEST_CASE("e2e: HTTP/1.2 is served as HTTP/1.1 (RFC 9110 2.5); HTTP/2.0 in an HTTP/1 request line is 505") {
  fixture f;
  {
    client c(f.port());
    const auto r = c.exchange("GET /plaintext HTTP/1.2\r\nHost: x\r\n\r\n");
    CHECK(r.status == 200);
    CHECK(r.version == 11);
    CHECK(r.keep_alive);
    CHECK(c.exchange(get("/json")).status == 200);
  }
  rejected(f, "GET /plaintext HTTP/2.0\r\nHost: x\r\n\r\n", 505);
  rejected(f, "GET /plaintext HTTP/3.0\r\nHost: x\r\n\r\n", 505);
}

TEST_CASE("e2e: a chunk line or header line ending in a bare LF is 400 at once (RFC 9112 7.1, 2.2)") {
  fixture f;  // the idle timeout (30 s) is longer than the client's: a stall fails the read
  const std::string chunked_post = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  rejected(f, chunked_post + "5\nhello\n0\n\n", 400);
  rejected(f, chunked_post + "5\r\nhello\r\n0\n\n", 400);
  rejected(f, chunked_post + "5\r\nhello\n", 400);
  rejected(f, "GET /plaintext HTTP/1.1\nHost: x\n\n", 400);
}

TEST_CASE("e2e: keep-alive and pipelining, responses in order") {
  fixture f;
  client c(f.port());
  for (int i = 0; i < 200; ++i) {
    const auto r = c.exchange(get(i % 2 ? "/plaintext" : "/json"));
    REQUIRE(r.status == 200);
    CHECK(r.keep_alive);
  }
  // 16 deep, with jobs of different lengths in between: the order must still be the request order.
  std::string burst;
  std::vector<std::pair<bool, std::string>> expect;  // (HEAD?, body)
  for (int i = 0; i < 2; ++i) {
    burst += get("/sleep?ms=30");
    expect.emplace_back(false, R"({"slept_ms":30})");
    burst += get("/plaintext");
    expect.emplace_back(false, "Hello, World!");
    burst += get("/fib?n=15");
    expect.emplace_back(false, R"({"n":15,"fib":610})");
    burst += "HEAD /json HTTP/1.1\r\nHost: x\r\n\r\n";
    expect.emplace_back(true, "");
    burst += get("/busy?ms=3");
    expect.emplace_back(false, R"({"busy_ms":3})");
    burst += post("/echo", "pipelined-" + std::to_string(i));
    expect.emplace_back(false, "pipelined-" + std::to_string(i));
    burst += get("/sleep?ms=1");
    expect.emplace_back(false, R"({"slept_ms":1})");
    burst += get("/static/hello.txt");
    expect.emplace_back(false, "hello, file\n");
  }
  REQUIRE(expect.size() == 16);
  c.send(burst);
  for (const auto& [head, body] : expect) {
    const auto r = c.read(head);
    CHECK(r.status == 200);
    CHECK(r.body == body);
  }
  // Deeper than the server's pipeline limit, sent at once.
  burst.clear();
  for (int i = 0; i < 300; ++i) burst += get("/plaintext?i=" + std::to_string(i));
  c.send(burst);
  for (int i = 0; i < 300; ++i) REQUIRE(c.read().body == "Hello, World!");
}

// The pipelining semantics every driver shares (docs/server-four-ways.md): a connection's jobs may
// run concurrently on the pool, and the responses go out in request order. Four pipelined sleeps
// of 330, 320, 310 and 300 ms take at least 1,260 ms run one after another; run concurrently they
// take about 330 ms where a sleep holds no thread (fibers, coroutines, reactor, the fixture's
// timer) and about 650 ms where it holds one of the 2 workers (futures, generic). The bound sits
// between 650 and 1,260 with room for a sanitizer build on a loaded machine; the longest sleep
// comes first, so responses sent as their jobs finish would come out reversed.
TEST_CASE("e2e: a connection's pipelined jobs run concurrently, responses in request order") {
  fixture f;
  client c(f.port());
  REQUIRE(c.exchange(get("/plaintext")).status == 200);  // connected and served: time only the jobs
  const std::vector<int> sleeps{330, 320, 310, 300};
  std::string burst;
  for (const int ms : sleeps) burst += get("/sleep?ms=" + std::to_string(ms));
  const auto took = timed([&] {
    c.send(burst);
    for (const int ms : sleeps) {
      const auto r = c.read();
      REQUIRE(r.status == 200);
      REQUIRE(r.body == fmt::format(R"({{"slept_ms":{}}})", ms));
    }
  });
  CHECK_MESSAGE(took >= 330ms, "four pipelined sleeps answered in ", took.count(), " ms");
  CHECK_MESSAGE(took < 1000ms, "four pipelined sleeps took ", took.count(),
                " ms: the driver ran a connection's jobs one after another (at least 1,260 ms)");
}

TEST_CASE("e2e: HTTP/1.0 and Connection: close") {
  fixture f;
  {
    client c(f.port());
    const auto r = c.exchange("GET /plaintext HTTP/1.0\r\n\r\n");
    CHECK(r.status == 200);
    CHECK_FALSE(r.keep_alive);
    CHECK(c.closed_by_server(e2e::io_timeout()));
  }
  {
    client c(f.port());
    auto r = c.exchange("GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    CHECK(r.header("connection") == "keep-alive");
    r = c.exchange("GET /json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    CHECK(r.status == 200);
  }
  {
    client c(f.port());
    const auto r = c.exchange(get("/plaintext", "Connection: close\r\n"));
    CHECK(r.header("connection") == "close");
    CHECK(c.closed_by_server(e2e::io_timeout()));
  }
}

TEST_CASE("e2e: 1,000 concurrent connections") {
  fixture f;
  constexpr std::size_t n = 1000;
  asio::io_context io;
  struct conn {
    explicit conn(asio::io_context& io) : socket(io) {}
    tcp::socket socket;
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
  };
  std::vector<std::unique_ptr<conn>> conns;
  const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), f.port());
  std::size_t connected = 0, answered = 0, failed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    conns.push_back(std::make_unique<conn>(io));
    conns.back()->socket.async_connect(ep, [&](error_code ec) { ec ? ++failed : ++connected; });
  }
  asio::steady_timer guard(io, std::chrono::seconds(60) * e2e::slowdown());
  guard.async_wait([&](error_code ec) {
    if (!ec) io.stop();
  });
  while (connected + failed < n && !io.stopped()) io.run_one();
  REQUIRE(failed == 0);
  REQUIRE(connected == n);
  // All 1,000 are open at once, as the server sees it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20) * e2e::slowdown();
  std::uint64_t open = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    open = f.stats()["connections"]["open"].get<std::uint64_t>();
    if (open >= n + 1) break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(open >= n + 1);
  const std::string req = get("/plaintext");
  for (auto& c : conns) {
    asio::async_write(c->socket, asio::buffer(req), [&, c = c.get()](error_code ec, std::size_t) {
      if (ec) return void(++failed);
      http::async_read(c->socket, c->buffer, c->res, [&, c](error_code e, std::size_t) {
        (e || c->res.body() != "Hello, World!") ? ++failed : ++answered;
      });
    });
  }
  while (answered + failed < n && !io.stopped()) io.run_one();
  CHECK(failed == 0);
  CHECK(answered == n);
}

// More work than one server thread can do, whatever the client's speed: 20 connections keep a
// /busy?ms=1 in flight each (20 ms of spinning asked per millisecond), 200 more a /sleep?ms=1
// each, every connection sending its next request as soon as the answer arrives. Served in
// roughly the order they came, a request waits for the busy jobs ahead of it: tens of
// milliseconds. A scheduler that serves its newest work first under overload (the coroutine
// pool's LIFO deque once did: server/README.md, "The /sleep tail") leaves some request waiting for
// as long as the overload lasts, here the whole 3 s run. Bounded: 3 s of load, then the requests
// in flight finish; a guard stops everything after 60 s.
// The bound is 1 s. On a machine so loaded that the server gets a small share of a core, every
// request is slow, in order or not (once: 439 requests in 3 s, the slowest 3.1 s, under a fair
// pool), so the check also passes when the slowest request took under 10 times the mean one:
// waiting behind later ones makes one request slow while the others are fast, a starved process
// makes all of them slow. (A starving scheduler on a loaded machine can pass that way; on an idle
// one, as in CI, the 1 s bound holds it.)
TEST_CASE("e2e: under more load than one thread serves, no request waits behind later ones") {
  temp_dir tmp;
  e2e::server_process server({"--threads", "1"}, tmp.path);
  constexpr std::size_t busy = 20, sleepers = 200;
  using clock = std::chrono::steady_clock;
  const std::string spin = get("/busy?ms=1"), nap = get("/sleep?ms=1");
  asio::io_context io;
  struct conn {
    conn(asio::io_context& io, const std::string& request) : socket(io), request(request) {}
    tcp::socket socket;
    const std::string& request;
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    clock::time_point sent;
  };
  std::vector<std::unique_ptr<conn>> all;
  all.reserve(busy + sleepers);
  const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), server.port());
  for (std::size_t i = 0; i < busy + sleepers; ++i) {
    all.push_back(std::make_unique<conn>(io, i < busy ? spin : nap));
    all.back()->socket.connect(ep);
  }
  const auto end = clock::now() + 3s;
  std::size_t failed = 0, finished = 0, answered = 0;
  clock::duration worst{}, total{};
  std::function<void(conn&)> send;
  send = [&](conn& c) {
    c.sent = clock::now();
    asio::async_write(c.socket, asio::buffer(c.request), [&](error_code ec, std::size_t) {
      if (ec) return void(++failed);
      c.res = {};
      http::async_read(c.socket, c.buffer, c.res, [&](error_code e, std::size_t) {
        if (e || c.res.result_int() != 200) return void(++failed);
        ++answered;
        const auto took = clock::now() - c.sent;
        worst = std::max(worst, took);
        total += took;
        if (clock::now() < end) return send(c);
        ++finished;
      });
    });
  };
  for (auto& c : all) send(*c);
  asio::steady_timer guard(io, std::chrono::seconds(60) * e2e::slowdown());
  guard.async_wait([&](error_code ec) {
    if (!ec) io.stop();
  });
  while (finished + failed < all.size() && !io.stopped()) io.run_one();
  REQUIRE(failed == 0);
  REQUIRE(finished == all.size());
  const auto worst_ms = std::chrono::duration_cast<std::chrono::milliseconds>(worst).count();
  const auto mean = total / static_cast<clock::rep>(answered);
  const auto mean_ms = std::chrono::duration_cast<std::chrono::milliseconds>(mean).count();
  MESSAGE(answered, " requests; the slowest took ", worst_ms, " ms, the mean ", mean_ms, " ms");
  const bool in_time = worst < std::chrono::seconds(1) * e2e::slowdown();
  const bool all_slow = worst < 10 * mean;  // the machine, not the order (see above)
  CHECK_MESSAGE((in_time || all_slow), "a request took ", worst_ms, " ms against a mean of ", mean_ms,
                " ms: it waited behind later ones");
}

TEST_CASE("e2e: idle and slow-header timeouts") {
  fixture f({"--idle-timeout-ms", "400", "--header-timeout-ms", "300"});
  {
    client c(f.port());
    CHECK(c.exchange(get("/plaintext")).status == 200);
    const auto waited = timed([&] { CHECK(c.closed_by_server(e2e::io_timeout())); });
    CHECK(waited >= 250ms);  // idle: closed without a response
  }
  {
    client c(f.port());
    const auto waited = timed([&] {
      c.send("GET /plaintext HTTP/1.1\r\n");
      std::this_thread::sleep_for(120ms);
      c.send("Host: x\r\n");  // trickling bytes do not extend the header deadline
      std::this_thread::sleep_for(120ms);
      c.send("X-Slow: 1\r\n");
      const auto r = c.read();
      CHECK(r.status == 408);
      CHECK_FALSE(r.keep_alive);
      CHECK(c.closed_by_server(e2e::io_timeout()));
    });
    CHECK(waited >= 250ms);
  }
  CHECK(f.stats()["connections"]["timeouts"].get<int>() >= 2);
}

TEST_CASE("e2e: the connection cap refuses politely") {
  fixture f({"--max-connections", "3"});
  std::vector<std::unique_ptr<client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<client>(f.port()));
    REQUIRE(held.back()->exchange(get("/plaintext")).status == 200);
  }
  {
    client over(f.port());
    const auto r = over.exchange(get("/plaintext"));
    CHECK(r.status == 503);
    CHECK(r.header("retry-after") == "1");
    CHECK_FALSE(r.keep_alive);
    CHECK(over.closed_by_server(e2e::io_timeout()));
  }
  held.pop_back();  // frees a place once the server sees the close
  const auto deadline = std::chrono::steady_clock::now() + e2e::io_timeout();
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    status = fetch(f.port(), get("/plaintext")).status;
    if (status == 200) break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(status == 200);
  CHECK(held[0]->exchange(get("/json")).status == 200);  // the held ones were never disturbed
}

namespace {
/// Whether this server bounds its job queue (server_futures, server_coroutines): its --help
/// says so; the others reject --queue-limit.
bool has_queue_limit() {
  temp_dir tmp;
  const auto r = e2e::run_server_command({"--help"}, tmp.path);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.output.find("--queue-limit") != std::string::npos);
  return r.output.find("has no job queue") == std::string::npos;
}
}  // namespace

// Back-pressure: with --queue-limit 1 and two workers, six pipelined /busy jobs of 200 ms find the
// queue full after at most three are taken (two running, one waiting), so some get 503 with
// Retry-After at once; the responses stay in request order, the connection stays open, and the
// server serves this and other connections as soon as the jobs are done (about 400 ms at most).
TEST_CASE("e2e: a full job queue answers 503 with Retry-After, and the connection stays usable") {
  if (!has_queue_limit()) {
    temp_dir tmp;
    const auto r = e2e::run_server_command({"--queue-limit", "5"}, tmp.path);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("has no job queue to bound") != std::string::npos);
    return;
  }
  fixture f({"--queue-limit", "1"});
  client c(f.port());
  REQUIRE(c.exchange(get("/plaintext")).status == 200);
  constexpr int jobs = 6;
  std::string burst;
  for (int i = 0; i < jobs; ++i) burst += get("/busy?ms=200");
  int served = 0, rejected = 0;
  const auto took = timed([&] {
    c.send(burst);
    for (int i = 0; i < jobs; ++i) {
      const auto r = c.read();
      CAPTURE(i);
      REQUIRE((r.status == 200 || r.status == 503));
      CHECK(r.keep_alive);
      if (r.status == 200) {
        CHECK(r.body == R"({"busy_ms":200})");
        ++served;
      } else {
        CHECK(r.header("retry-after") == "1");
        ++rejected;
      }
    }
  });
  CHECK(served >= 1);
  CHECK(rejected >= 1);
  CHECK(served <= 3);  // two running and one waiting at most: the queue held at most one
  CHECK_MESSAGE(took < 5s, "the burst took ", took.count(), " ms");
  CHECK(f.stats()["jobs"]["refused"].get<int>() == rejected);
  // The same connection, and another one, are served as before.
  CHECK(c.exchange(get("/busy?ms=1")).status == 200);
  CHECK(c.exchange(get("/plaintext")).status == 200);
  CHECK(fetch(f.port(), get("/fib?n=10")).status == 200);
}

TEST_CASE("e2e: --queue-limit takes an integer in 0..10000000") {
  if (!has_queue_limit()) return;  // the case above checks that it is refused
  temp_dir tmp;
  for (const auto& bad : std::vector<std::string>{"-1", "abc", "10000001", ""}) {
    CAPTURE(bad);
    const auto r = e2e::run_server_command({"--queue-limit", bad}, tmp.path);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("--queue-limit") != std::string::npos);
  }
}

TEST_CASE("e2e: SIGTERM finishes the requests in flight, closes idle connections, exits 0") {
  fixture f;
  constexpr int busy_clients = 6;
  std::vector<std::unique_ptr<client>> clients;
  for (int i = 0; i < busy_clients; ++i) {
    clients.push_back(std::make_unique<client>(f.port()));
    clients.back()->send(get("/sleep?ms=600"));
  }
  client idle(f.port());
  CHECK(idle.exchange(get("/plaintext")).status == 200);
  f.wait_in_flight(busy_clients + 1);  // every /sleep parsed: the six and the /stats request

  f.server->signal(SIGTERM);
  CHECK(idle.closed_by_server(e2e::io_timeout()));  // idle connections go at once
  // No new connections: refused, or closed without an answer.
  {
    asio::io_context io;
    tcp::socket s(io);
    error_code ec;
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), f.port()), ec);
    if (!ec) {
      const std::string req = get("/plaintext");
      asio::write(s, asio::buffer(req), ec);
      char byte;
      s.read_some(asio::buffer(&byte, 1), ec);
      CHECK(ec);  // EOF or reset: no response
    }
  }
  for (auto& c : clients) {
    const auto r = c->read();
    CHECK(r.status == 200);
    CHECK(r.body == R"({"slept_ms":600})");
    CHECK_FALSE(r.keep_alive);  // answered during shutdown: told not to come back
    CHECK(c->closed_by_server(e2e::io_timeout()));
  }
  const auto code = f.server->wait_exit(std::chrono::seconds(15) * e2e::slowdown());
  REQUIRE(code.has_value());
  CHECK_MESSAGE(*code == 0, "stderr:\n", f.server->stderr_text());
}

TEST_CASE("e2e: SIGINT stops an idle server with exit code 0") {
  fixture f;
  CHECK(fetch(f.port(), get("/plaintext")).status == 200);
  f.server->signal(SIGINT);
  const auto code = f.server->wait_exit(std::chrono::seconds(10) * e2e::slowdown());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("e2e: past the shutdown deadline, or on a second signal, what remains is dropped, exit 0") {
  for (const bool second_signal : {false, true}) {
    CAPTURE(second_signal);
    fixture f({"--shutdown-timeout-ms", second_signal ? "60000" : "200"});
    client slow(f.port());
    slow.send(get("/sleep?ms=1500"));
    f.wait_in_flight(2);  // the /sleep and the /stats request
    f.server->signal(SIGTERM);
    if (second_signal) {
      std::this_thread::sleep_for(50ms);  // let the first be handled alone
      f.server->signal(SIGINT);
    }
    CHECK(slow.closed_by_server(e2e::io_timeout()));  // dropped before its response
    const auto code = f.server->wait_exit(std::chrono::seconds(15) * e2e::slowdown());
    REQUIRE(code.has_value());
    CHECK_MESSAGE(*code == 0, "stderr:\n", f.server->stderr_text());
    const auto log = f.server->stderr_text();
    CHECK_MESSAGE(log.find(second_signal ? "a second signal: dropping 1 connections"
                                         : "shutdown deadline: dropping 1 connections") != std::string::npos,
                  "stderr:\n", log);
  }
}

// A pool with a queue (futures: every /sleep holds a worker) can hold far more accepted work than
// the shutdown deadline allows. Once the deadline drops the connections, what is still queued for
// them must be skipped, or the exit waits for work nobody will read (here 40 x 1 s on 2 workers:
// 20 s, against a 300 ms deadline). Drivers without such a queue exit as fast.
TEST_CASE("e2e: at the shutdown deadline, jobs still queued for dropped connections are skipped") {
  fixture f({"--shutdown-timeout-ms", "300"});
  constexpr int clients_count = 40;
  std::vector<std::unique_ptr<client>> clients;
  for (int i = 0; i < clients_count; ++i) {
    clients.push_back(std::make_unique<client>(f.port()));
    clients.back()->send(get("/sleep?ms=1000"));
  }
  f.wait_in_flight(clients_count + 1);  // every /sleep parsed, and the /stats request
  const auto signalled = std::chrono::steady_clock::now();
  f.server->signal(SIGTERM);
  // 300 ms deadline + at most one running 1 s sleep per worker; 4 s leaves room for a slow CI.
  const auto code = f.server->wait_exit(std::chrono::seconds(4) * e2e::slowdown());
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - signalled);
  REQUIRE_MESSAGE(code.has_value(), "still running ", took.count(), " ms after SIGTERM");
  CHECK_MESSAGE(*code == 0, "stderr:\n", f.server->stderr_text());
  MESSAGE("exited ", took.count(), " ms after SIGTERM");
}

TEST_CASE("e2e: command line") {
  temp_dir tmp;
  auto r = e2e::run_server_command({"--help"}, tmp.path);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("--max-body") != std::string::npos);
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--port", "99999"},
                                                               {"--threads", "0"},
                                                               {"--root", "/nonexistent/dir"},
                                                               {"--bogus"},
                                                               {"--port", "-1"}}) {
    CAPTURE(bad[0]);
    r = e2e::run_server_command(bad, tmp.path);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("error:") != std::string::npos);
  }
}

namespace {
std::optional<std::string> find_curl() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (::access((dir + "/curl").c_str(), X_OK) == 0) return dir + "/curl";
  return std::nullopt;
}

/// Runs curl with `args`; returns what -w printed (the body goes to `out_file`).
std::string curl(const std::string& exe, const std::string& args, const fs::path& out_file) {
  const auto cmd = fmt::format("{} -sS --max-time {} -o '{}' -w '%{{http_code}} %{{content_type}}' {}", exe,
                               20 * e2e::slowdown(), out_file.string(), args);
  std::string printed;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) printed += buf;
  CHECK(::pclose(p) == 0);
  return printed;
}
}  // namespace

TEST_CASE("e2e: curl, where installed") {
  const auto exe = find_curl();
  if (!exe) {
    MESSAGE("curl is not installed: skipping the curl checks (the Beast client covered the same ground)");
    return;
  }
  fixture f;
  const auto url = fmt::format("http://127.0.0.1:{}", f.port());
  const auto out = f.tmp.path / "curl.out";

  CHECK(curl(*exe, url + "/plaintext", out) == "200 text/plain");
  CHECK(read_file(out) == "Hello, World!");
  CHECK(curl(*exe, "--http1.0 " + url + "/json", out) == "200 application/json");
  CHECK(curl(*exe, url + "/static/blob.bin", out) == "200 application/octet-stream");
  CHECK(read_file(out) == patterned(100'000));
  CHECK(curl(*exe, "-I " + url + "/static/hello.txt", out).starts_with("200 text/plain"));
  CHECK(curl(*exe, "'" + url + "/fib?n=abc'", out).starts_with("400"));

  // 2 MiB upload: curl sends Expect: 100-continue and would wait a second for the 100.
  const auto upload = f.tmp.path / "upload.bin";
  write_file(upload, patterned(2u << 20));
  const auto took = timed([&] {
    CHECK(curl(*exe,
               "--data-binary @" + upload.string() + " -H 'Content-Type: application/x-up' " + url + "/echo",
               out) == "200 application/x-up");
  });
  CHECK(read_file(out) == patterned(2u << 20));
  CHECK(took < std::chrono::milliseconds(900) * e2e::slowdown());
  CHECK(curl(*exe,
             "-H 'Transfer-Encoding: chunked' -H 'Content-Type: text/plain' --data-binary @" +
                 upload.string() + " " + url + "/echo",
             out) == "200 text/plain");
  CHECK(read_file(out) == patterned(2u << 20));
}
