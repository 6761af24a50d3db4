// SPDX-License-Identifier: MIT
// GET /static/<path>: files below --root, Content-Type, streaming in pieces, and every way out.
#include "static_files.hpp"

#include <doctest/doctest.h>

#include <pools/server/options.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "test_support.hpp"

using test::answers;
using test::get;
namespace srv = pools::server;
namespace fs = std::filesystem;

namespace {
struct site {
  test::temp_dir root, outside;
  site() {
    root.write("hello.txt", "hello, file\n");
    root.write("page.html", "<p>hi</p>");
    root.write("sub/data.json", "{}");
    root.write("a b.txt", "space");
    root.write("noext", "x");
    outside.write("secret.txt", "do not serve");
    fs::create_symlink(outside.path / "secret.txt", root.path / "evil.txt");
    fs::create_directory_symlink(outside.path, root.path / "evil_dir");
    fs::create_symlink(root.path / "hello.txt", root.path / "alias.txt");  // stays inside: fine
  }
};

int status_of(srv::app& app, const std::string& target) {
  const auto rs = answers(app, get(target));
  REQUIRE(rs.size() == 1);
  return rs[0].status;
}
}  // namespace

TEST_CASE("static: files below --root, with their Content-Type") {
  site s;
  srv::app app(test::options(s.root.path), "test");
  struct expect {
    std::string target, body, type;
  };
  for (const auto& e : {expect{"/static/hello.txt", "hello, file\n", "text/plain; charset=utf-8"},
                        expect{"/static/page.html", "<p>hi</p>", "text/html; charset=utf-8"},
                        expect{"/static/sub/data.json", "{}", "application/json"},
                        expect{"/static/a%20b.txt", "space", "text/plain; charset=utf-8"},
                        expect{"/static/noext", "x", "application/octet-stream"},
                        expect{"/static/alias.txt", "hello, file\n", "text/plain; charset=utf-8"}}) {
    CAPTURE(e.target);
    const auto rs = answers(app, get(e.target));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].body == e.body);
    CHECK(rs[0].header("content-type") == e.type);
  }
  const auto rs =
      answers(app, "HEAD /static/hello.txt HTTP/1.1\r\nHost: t\r\n\r\n", std::string::npos, {true});
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].header("content-length") == "12");
  CHECK(rs[0].body.empty());
}

TEST_CASE("static: every path that escapes --root is 404") {
  site s;
  srv::app app(test::options(s.root.path / "sub" / ".."), "test");  // a non-canonical root is canonicalised
  CHECK(status_of(app, "/static/hello.txt") == 200);
  const auto outside_name = s.outside.path.filename().string();
  for (const std::string& bad : std::vector<std::string>{
           "/static/../" + outside_name + "/secret.txt",
           "/static/%2e%2e/" + outside_name + "/secret.txt",
           "/static/%2E%2E%2F" + outside_name + "%2Fsecret.txt",
           "/static/sub/../../" + outside_name + "/secret.txt",
           "/static/sub/%2e%2e/hello.txt",  // even when it would stay inside: ".." is refused outright
           "/static/./hello.txt",
           "/static//etc/passwd",
           "/static/%2Fetc%2Fpasswd",
           "/static/" + s.outside.path.string() + "/secret.txt",
           "/static/evil.txt",             // a symlink to a file outside
           "/static/evil_dir/secret.txt",  // through a symlinked directory
           "/static/",
           "/static/sub",
           "/static/sub/",
           "/static/missing.txt",
       }) {
    CAPTURE(bad);
    CHECK(status_of(app, bad) == 404);
  }
}

// nginx answers 404 for anything under its root that is not a regular file
// (ngx_http_static_module.c: "is not a regular file"), and opens with O_NONBLOCK "not to hang on
// FIFO files" (ngx_open_file_cache.c). A blocking open() of a FIFO waits for a writer: the
// request runs on another thread here, so that such a hang fails the test instead of hanging it.
TEST_CASE("static: a FIFO, a device or a directory under --root is 404 at once, never a blocking open") {
  using namespace std::chrono_literals;
  test::temp_dir root;
  root.write("hello.txt", "hi");
  root.write("sub/x.txt", "x");
  const auto fifo = root.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  srv::app app(test::options(root.path), "test");
  auto answered = std::async(std::launch::async, [&] {
    return answers(app, get("/static/pipe") + get("/static/sub") + get("/static/hello.txt"));
  });
  if (answered.wait_for(5s) != std::future_status::ready) {
    FAIL_CHECK("GET /static/pipe blocked for 5 s");
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // releases the blocked open()
    if (writer >= 0) ::close(writer);
  }
  const auto rs = answered.get();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].status == 404);
  CHECK(rs[1].status == 404);
  CHECK(rs[2].status == 200);

  srv::app dev(test::options("/dev"), "test");  // character devices
  for (const std::string name : {"null", "zero", "urandom"}) {
    CAPTURE(name);
    CHECK(status_of(dev, "/static/" + name) == 404);
  }
}

TEST_CASE("static: without --root every /static path is 404") {
  srv::app app(test::options(), "test");
  CHECK(status_of(app, "/static/hello.txt") == 404);
}

TEST_CASE("static: a large file is streamed in pieces, never whole") {
  test::temp_dir root;
  const std::size_t size = 5 * srv::limits::file_chunk + 123;
  std::string content(size, '\0');
  for (std::size_t i = 0; i < size; ++i) content[i] = static_cast<char>('a' + (i * 131 % 26));
  root.write("big.bin", content);
  srv::app app(test::options(root.path), "test");
  test::driver d(app);
  d.send(get("/static/big.bin") + get("/plaintext"));
  const auto rs = d.responses();
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].header("content-length") == std::to_string(size));
  CHECK(rs[0].body == content);
  CHECK(rs[1].body == "Hello, World!");
  CHECK(d.write_sizes.size() >= 6);
  for (const auto n : d.write_sizes) CHECK(n <= srv::limits::file_chunk + 512);
}

TEST_CASE("static: a file that shrinks while it is sent closes the connection (the length was promised)") {
  test::temp_dir root;
  root.write("shrinks.bin", std::string(3 * srv::limits::file_chunk, 's'));
  srv::app app(test::options(root.path), "test");
  srv::connection c(app);
  REQUIRE(c.next() == srv::action::read);
  const std::string req = get("/static/shrinks.bin") + get("/plaintext");
  auto buf = c.read_buffer();
  std::copy(req.begin(), req.end(), buf.data());
  c.commit(req.size());
  REQUIRE(c.next() == srv::action::write);
  c.consume(c.output().size());
  fs::resize_file(root.path / "shrinks.bin", srv::limits::file_chunk);
  std::size_t written = 0;
  srv::action a;
  while ((a = c.next()) == srv::action::write) {
    written += c.output().size();
    c.consume(c.output().size());
  }
  CHECK(a == srv::action::close);
  CHECK(written < 2 * srv::limits::file_chunk);
}

TEST_CASE("static: content types by extension") {
  using pools::server::detail::content_type_for;
  CHECK(content_type_for("a.HTML") == "text/html; charset=utf-8");
  CHECK(content_type_for("x/y.css") == "text/css; charset=utf-8");
  CHECK(content_type_for("app.js") == "text/javascript; charset=utf-8");
  CHECK(content_type_for("i.png") == "image/png");
  CHECK(content_type_for("i.JPEG") == "image/jpeg");
  CHECK(content_type_for("f.svg") == "image/svg+xml");
  CHECK(content_type_for("m.wasm") == "application/wasm");
  CHECK(content_type_for(".bashrc") == "application/octet-stream");
  CHECK(content_type_for("dir.d/file") == "application/octet-stream");
}
