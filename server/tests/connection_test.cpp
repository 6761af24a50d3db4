// SPDX-License-Identifier: MIT
// The connection state machine: keep-alive, pipelining, close, EOF, timeouts, shutdown, the
// connection cap, jobs completed out of order, lingering close.
#include <doctest/doctest.h>

#include <pools/server/options.hpp>

#include <string>
#include <vector>

#include "test_support.hpp"

using test::get;
namespace srv = pools::server;
using namespace std::chrono_literals;

namespace {
srv::app make_app(srv::options o = test::options(), bool every_request_is_a_job = false) {
  return srv::app(std::move(o), "test", every_request_is_a_job);
}
}  // namespace

TEST_CASE("connection: keep-alive serves request after request on one connection") {
  auto app = make_app();
  test::driver d(app);
  for (int i = 1; i <= 5; ++i) {
    d.send(get("/plaintext"));
    CHECK(d.last == srv::action::read);
    const auto rs = d.responses();
    REQUIRE(rs.size() == static_cast<std::size_t>(i));
    CHECK(rs.back().keep_alive);
    CHECK_FALSE(rs.back().has("connection"));
  }
  CHECK(d.conn.requests() == 5);
  d.eof();
  CHECK(d.closed);
  CHECK_FALSE(d.half_closed);  // the peer closed first: nothing to linger for
}

TEST_CASE("connection: pipelined requests are answered in order, whatever order their jobs finish in") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/sleep?ms=30") + get("/plaintext") + get("/fib?n=10") + get("/json") + get("/busy?ms=1") +
         get("/plaintext"));
  REQUIRE(d.held.size() == 3);
  CHECK(d.last == srv::action::wait);
  CHECK(d.written.empty());  // response 1 waits for the first job
  CHECK(d.conn.deadline() == srv::connection::clock::time_point::max());
  d.complete(2);  // busy
  d.complete(1);  // fib
  CHECK(d.written.empty());
  d.complete(0);  // sleep: now everything can go, in order
  const auto rs = d.responses();
  REQUIRE(rs.size() == 6);
  CHECK(rs[0].body == R"({"slept_ms":30})");
  CHECK(rs[1].body == "Hello, World!");
  CHECK(rs[2].body == R"({"n":10,"fib":55})");
  CHECK(rs[3].body == R"({"message":"Hello, World!"})");
  CHECK(rs[4].body == R"({"busy_ms":1})");
  CHECK(rs[5].body == "Hello, World!");
  CHECK(d.last == srv::action::read);
}

TEST_CASE("connection: ready responses of a pipeline leave in one write") {
  auto app = make_app();
  test::driver d(app);
  std::string burst;
  for (int i = 0; i < 16; ++i) burst += get("/plaintext");
  d.send(burst);
  CHECK(d.responses().size() == 16);
  CHECK(d.write_sizes.size() == 1);
}

TEST_CASE("connection: a pipeline deeper than the limit is parsed as responses drain") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  const std::size_t n = srv::limits::max_pipeline * 2 + 5;
  std::string burst;
  for (std::size_t i = 0; i < n; ++i) burst += get("/sleep?ms=" + std::to_string(i));
  d.send(burst);
  CHECK(d.held.size() == srv::limits::max_pipeline);  // the rest waits in the buffer, unparsed
  for (std::size_t i = 0; i < d.held.size(); ++i) d.complete(i);
  REQUIRE(d.held.size() == n);
  const auto rs = d.responses();
  REQUIRE(rs.size() == n);
  for (std::size_t i = 0; i < n; ++i) CHECK(rs[i].body == R"({"slept_ms":)" + std::to_string(i) + "}");
}

TEST_CASE("connection: Connection: close and HTTP/1.0 end the connection after the response") {
  auto app = make_app();
  for (const std::string& req : std::vector<std::string>{get("/plaintext", "Connection: close\r\n"),
                                                         std::string("GET /plaintext HTTP/1.0\r\n\r\n")}) {
    CAPTURE(req);
    test::driver d(app);
    d.send(req + get("/json"));  // never answered: the connection closes first
    const auto rs = d.responses();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].header("connection") == "close");
    CHECK(d.half_closed);  // lingering close: keep reading until the peer's EOF
    CHECK(d.last == srv::action::read);
    d.send("more bytes are discarded");
    d.eof();
    CHECK(d.closed);
  }
}

TEST_CASE("connection: HTTP/1.0 with keep-alive stays open and says so") {
  auto app = make_app();
  test::driver d(app);
  d.send("GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  d.send("GET /json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  const auto rs = d.responses();
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].header("connection") == "keep-alive");
  CHECK(d.last == srv::action::read);
}

TEST_CASE("connection: an unparseable request is answered, and nothing after it is") {
  auto app = make_app();
  test::driver d(app);
  d.send(get("/plaintext") + "NOT HTTP AT ALL\r\n\r\n" + get("/plaintext"));
  const auto rs = d.responses();
  REQUIRE(rs.size() == 2);
  CHECK(rs[0].status == 200);
  CHECK(rs[1].status == 400);
  CHECK(rs[1].header("connection") == "close");
  CHECK(d.half_closed);
}

TEST_CASE("connection: EOF answers the complete requests and drops a partial one") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/sleep?ms=1") + get("/plaintext") + "GET /json HTTP/1.1\r\nHo");
  CHECK(d.last == srv::action::wait);
  d.conn.end_of_input();  // a real driver would see EOF on its next read; here it comes early
  d.complete(0);
  const auto rs = d.responses();
  REQUIRE(rs.size() == 2);
  CHECK(d.closed);
}

TEST_CASE("connection: idle and header timeouts") {
  auto o = test::options();
  o.idle_timeout = 1000ms;
  o.header_timeout = 100ms;
  auto app = make_app(o);
  using clock = srv::connection::clock;

  SUBCASE("idle: closed without a response") {
    test::driver d(app);
    const auto deadline = d.conn.deadline();
    CHECK(deadline > clock::now() + 500ms);
    CHECK_FALSE(d.conn.expire(deadline - 1ms));
    CHECK(d.conn.expire(deadline));
    d.eof();  // the driver cancels its read
    CHECK(d.closed);
    CHECK(d.written.empty());
    CHECK(app.counters().timeouts == 1);
  }
  SUBCASE("a started header: 408, and more bytes do not extend the header deadline") {
    test::driver d(app);
    d.send("GET /plaintext HTTP/1.1\r\n");
    const auto deadline = d.conn.deadline();
    CHECK(deadline <= clock::now() + 100ms);
    d.send("Ho");
    CHECK(d.conn.deadline() == deadline);
    CHECK(d.conn.expire(deadline + 1ms));
    d.eof();
    const auto rs = d.responses();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 408);
    CHECK(rs[0].header("connection") == "close");
    CHECK(d.closed);
  }
  SUBCASE("a body in progress is bounded by the idle timeout, not the header timeout") {
    test::driver d(app);
    d.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    CHECK(d.conn.deadline() > clock::now() + 500ms);
    CHECK(d.conn.expire(d.conn.deadline()));
    d.eof();
    const auto rs = d.responses();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 408);
  }
  SUBCASE("after a response, the next request's header deadline starts with its first byte") {
    test::driver d(app);
    d.send(get("/plaintext"));
    CHECK(d.conn.deadline() > clock::now() + 500ms);  // idle again
  }
}

TEST_CASE("connection: a peer that stops reading is dropped after the idle timeout") {
  auto o = test::options();
  o.idle_timeout = 50ms;
  auto app = make_app(o);
  auto d = std::make_unique<test::driver>(app);
  const std::string req = get("/plaintext");
  auto buf = d->conn.read_buffer();
  std::copy(req.begin(), req.end(), buf.data());
  d->conn.commit(req.size());
  CHECK(d->conn.next() == srv::action::write);  // the driver starts a write that never completes
  CHECK(d->conn.next() == srv::action::wait);
  CHECK_FALSE(d->conn.expire(srv::connection::clock::now()));
  CHECK(d->conn.expire(d->conn.deadline()));
  CHECK(d->conn.next() == srv::action::close);
}

TEST_CASE("connection: lingering ends at its deadline") {
  auto app = make_app();
  test::driver d(app);
  d.send(get("/plaintext", "Connection: close\r\n"));
  REQUIRE(d.half_closed);
  const auto deadline = d.conn.deadline();
  CHECK(deadline <= srv::connection::clock::now() + srv::limits::linger);
  CHECK(d.conn.expire(deadline));
  CHECK(d.conn.next() == srv::action::close);
}

TEST_CASE("connection: graceful shutdown") {
  auto app = make_app();
  SUBCASE("an idle connection: its read is cancelled and it closes at once") {
    test::driver d(app);
    d.send(get("/plaintext"));
    CHECK(d.conn.shutdown());
    CHECK_FALSE(d.conn.shutdown());  // idempotent
    d.eof();
    CHECK(d.closed);
    CHECK(d.responses().size() == 1);
  }
  SUBCASE("requests in flight finish, say Connection: close, and nothing else is parsed") {
    test::driver d(app, /*hold_jobs=*/true);
    d.send(get("/sleep?ms=5") + get("/plaintext") + "GET /json HTTP/1.1\r\nHost");
    CHECK_FALSE(d.conn.shutdown());  // nothing to cancel: a job is running
    d.complete(0);
    const auto rs = d.responses();
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].header("connection") == "close");
    CHECK(d.closed);
  }
  SUBCASE("a connection mid-request is dropped") {
    test::driver d(app);
    d.send("GET /json HTTP/1.1\r\nHost");
    CHECK(d.conn.shutdown());
    d.eof();
    CHECK(d.closed);
    CHECK(d.written.empty());
  }
}

TEST_CASE("connection: past --max-connections a connection is refused with 503, politely") {
  auto o = test::options();
  o.max_connections = 2;
  auto app = make_app(o);
  {
    test::driver a(app), b(app);
    CHECK(app.counters().open == 2);
    test::driver c(app);
    CHECK(c.conn.refused());
    CHECK(app.counters().open == 2);
    CHECK(app.counters().refused == 1);
    c.send(get("/plaintext"));
    const auto rs = c.responses();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(rs[0].header("retry-after") == "1");
    CHECK(rs[0].header("connection") == "close");
    a.send(get("/plaintext"));
    CHECK(a.responses().at(0).status == 200);
  }
  CHECK(app.counters().open == 0);
  CHECK(app.counters().accepted == 2);
  test::driver d(app);
  CHECK_FALSE(d.conn.refused());
}

TEST_CASE("connection: a failed job is a 500; a wrong fib is a 500; the connection goes on") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/busy?ms=1") + get("/fib?n=20") + get("/plaintext"));
  REQUIRE(d.held.size() == 2);
  d.conn.fail(d.held[0], "boom");
  d.complete(1, 6764);  // fib(20) is 6765
  const auto rs = d.responses();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].status == 500);
  CHECK(rs[0].body.find("boom") != std::string::npos);
  CHECK(rs[1].status == 500);
  CHECK(rs[2].status == 200);
  CHECK(app.counters().status_5xx == 2);
  CHECK(app.counters().jobs_started == 2);
  CHECK(app.counters().jobs_done == 2);
}

TEST_CASE("connection: a job refused by a full queue is a 503 with Retry-After; the connection goes on") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/busy?ms=1") + get("/sleep?ms=5") + get("/plaintext"));
  REQUIRE(d.held.size() == 2);
  d.conn.reject(d.held[1]);
  d.complete(0);
  const auto rs = d.responses();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].status == 200);
  CHECK(rs[1].status == 503);
  CHECK(rs[1].header("retry-after") == "1");
  CHECK(rs[1].keep_alive);
  CHECK(rs[2].status == 200);
  CHECK(d.last == srv::action::read);  // still open
  CHECK(app.counters().jobs_refused == 1);
  CHECK(app.counters().jobs_done == 2);
  d.send(get("/plaintext"));
  CHECK(d.responses().back().status == 200);
}

TEST_CASE("connection: the worker model gets every request as a job") {
  auto app = make_app(test::options(), /*every_request_is_a_job=*/true);
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/plaintext") + get("/nope") + get("/fib?n=3"));
  REQUIRE(d.held.size() == 3);
  CHECK(d.held[0].what == srv::job::kind::respond);
  CHECK(d.held[1].what == srv::job::kind::respond);
  CHECK(d.held[2].what == srv::job::kind::fib);
  d.complete(2);
  d.complete(1);
  CHECK(d.written.empty());
  d.complete(0);
  const auto rs = d.responses();
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].body == "Hello, World!");
  CHECK(rs[1].status == 404);
  CHECK(rs[2].body == R"({"n":3,"fib":2})");
}

TEST_CASE("connection: next() says wait while an operation it asked for is in flight") {
  auto app = make_app();
  srv::connection c(app);
  CHECK(c.next() == srv::action::read);
  CHECK(c.next() == srv::action::wait);  // the read is still pending
  c.end_of_input();
  CHECK(c.next() == srv::action::close);
}

TEST_CASE("connection: the client leaving stops its jobs, drops their responses, closes once they are back") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/sleep?ms=5000") + get("/plaintext") + get("/busy?ms=1000"));
  REQUIRE(d.held.size() == 2);
  CHECK(d.last == srv::action::wait);
  CHECK(d.conn.watch_wanted());  // jobs run, nothing reads: the driver should watch the socket
  CHECK(d.held[0].stop.stop_possible());
  CHECK_FALSE(d.held[0].stop.stop_requested());
  d.conn.jobs_stop().request_stop();  // the driver's watch saw EOF
  CHECK(d.held[0].stop.stop_requested());
  CHECK(d.held[1].stop.stop_requested());
  CHECK_FALSE(d.conn.watch_wanted());
  CHECK(d.conn.next() == srv::action::wait);  // both jobs are still out
  d.complete(1);
  CHECK(d.last == srv::action::wait);
  CHECK_FALSE(d.closed);
  d.complete(0);
  CHECK(d.closed);
  CHECK(d.written.empty());  // not even the ready /plaintext response: nobody reads it
  CHECK(app.counters().jobs_done.load() == 2);
  CHECK(app.counters().jobs_cancelled.load() == 2);
}

TEST_CASE("connection: while the client stays, its jobs' tokens are never stopped") {
  auto app = make_app();
  test::driver d(app, /*hold_jobs=*/true);
  d.send(get("/plaintext"));
  CHECK_FALSE(d.conn.watch_wanted());               // no job: nothing to watch for
  CHECK_FALSE(d.conn.jobs_stop().stop_possible());  // and no stop source made
  d.send(get("/sleep?ms=10"));
  REQUIRE(d.held.size() == 1);
  CHECK(d.conn.watch_wanted());
  d.complete(0);
  CHECK(d.last == srv::action::read);
  CHECK_FALSE(d.conn.watch_wanted());  // a read is in flight: it sees the client leave itself
  CHECK_FALSE(d.held[0].stop.stop_requested());
  CHECK(d.responses().size() == 2);
  CHECK(app.counters().jobs_cancelled.load() == 0);
  d.eof();
  CHECK(d.closed);
}
