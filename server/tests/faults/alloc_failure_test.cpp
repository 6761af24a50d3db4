// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp), through the server core: a
// request — plain, pipelined with a 404, a POST echo, one that starts a job — delivered to a
// connection with the k-th allocation of the delivery failing, for k = 1, 2, ... until it is
// answered. Each attempt:
// the driver's call throws std::bad_alloc or the right response is written; the connection, in
// whatever state the exception left it, can be destroyed (the contract: a driver closes a
// connection whose call threw) without a leak (LeakSanitizer in the asan preset) and is no longer
// counted open; and the same app then serves a new connection.
//
//
// The JSON bodies (/json, /stats, a job's result) are here too. nlohmann::basic_json's destructor
// reserves a std::vector to free a non-empty array or object without recursion, inside a noexcept
// destructor, so a failure there would end the process; the core's JSON (server/src/json_body.hpp)
// empties its values from the leaves up before they are destroyed.
#include <doctest/doctest.h>

#include <pools/server/options.hpp>
#include <pools/testing/fault_loop.hpp>

#include <memory>
#include <new>
#include <string>

#include "test_support.hpp"

namespace srv = pools::server;
namespace pt = pools::testing;
using test::get;

namespace {

const std::string any_json_object = "{...}";  // a body that varies: checked to be an object

void check_request(const char* what, const std::string& request, std::size_t responses,
                   const std::string& body) {
  pt::check_allocation_failures(what, [&](std::uint64_t k) {
    srv::app app(test::options(), "test", false);
    {
      auto d = std::make_unique<test::driver>(app, /*hold_jobs=*/responses == 0);
      bool refused = false;
      try {
        pt::fail_allocation armed(k);
        d->send(request);
      } catch (const std::bad_alloc&) {
        refused = true;
      }
      if (!refused && responses == 0) {
        CHECK(d->held.size() == 1);
      } else if (!refused) {
        const auto rs = d->responses();
        REQUIRE(rs.size() == responses);
        CHECK(rs.back().status == 200);
        if (body == any_json_object) {
          CHECK(rs.back().body.starts_with("{"));
        } else {
          CHECK(rs.back().body == body);
        }
      }
      d.reset();  // the driver closes the connection
    }
    CHECK(app.counters().open.load() == 0);
    test::driver after(app);  // the app still serves
    after.send(get("/plaintext"));
    const auto rs = after.responses();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "Hello, World!");
  });
}

}  // namespace

TEST_CASE("server core: a request under allocation failure") {
  check_request("GET /plaintext", get("/plaintext"), 1, "Hello, World!");
  check_request("a pipeline of three, one a 404", get("/plaintext") + get("/nowhere") + get("/plaintext"), 3,
                "Hello, World!");
  check_request("POST /echo", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello", 1, "hello");
  check_request("GET /fib (starts a job)", get("/fib?n=10"), 0, "");
}

TEST_CASE("server core: a JSON response under allocation failure") {
  check_request("GET /json", get("/json"), 1, R"({"message":"Hello, World!"})");
  check_request("GET /fib (the job's JSON result)", get("/fib?n=10"), 1, R"({"n":10,"fib":55})");
  check_request("GET /sleep (the job's JSON result)", get("/sleep?ms=0"), 1, R"({"slept_ms":0})");
  check_request("GET /stats", get("/stats"), 1, any_json_object);
}
