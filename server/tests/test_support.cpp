// SPDX-License-Identifier: MIT
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <pools/server/work.hpp>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>

namespace test {

namespace http = boost::beast::http;

std::vector<response> parse_responses(std::string_view bytes, const std::vector<bool>& head) {
  std::vector<response> out;
  std::size_t index = 0;  // of non-interim responses, for `head`
  while (!bytes.empty()) {
    http::response_parser<http::string_body> p;
    p.body_limit(std::numeric_limits<std::uint64_t>::max());
    p.eager(true);
    if (index < head.size() && head[index]) p.skip(true);
    boost::system::error_code ec;
    const std::size_t used = p.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more && !p.is_done()) {
      FAIL_CHECK("partial response at the end: ", std::string(bytes.substr(0, 200)));
      break;
    }
    if (ec) {
      FAIL_CHECK("malformed response (", ec.message(), "): ", std::string(bytes.substr(0, 200)));
      break;
    }
    REQUIRE(p.is_done());
    bytes.remove_prefix(used);
    auto msg = p.release();
    response r;
    r.status = static_cast<int>(msg.result_int());
    r.version = msg.version();
    for (const auto& f : msg) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      r.headers[name] = std::string(f.value());
    }
    r.body = std::move(msg.body());
    r.keep_alive = msg.keep_alive();
    if (r.status >= 200) ++index;
    out.push_back(std::move(r));
  }
  return out;
}

temp_dir::temp_dir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path = std::filesystem::temp_directory_path() / ("pools_server_test_" + std::to_string(::getpid()) + "_" +
                                                   std::to_string(counter++) + "_" + std::to_string(rd()));
  std::filesystem::create_directories(path);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

void temp_dir::write(const std::string& relative, std::string_view content) const {
  const auto file = path / relative;
  std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  REQUIRE(out.good());
}

srv::options options(const std::filesystem::path& root) {
  srv::options o;
  o.root = root;
  o.threads = 1;
  return o;
}

driver::driver(srv::app& app, bool hold_jobs) : conn(app, "test:1"), hold_jobs_(hold_jobs) {
  pump();
}

srv::action driver::pump() {
  for (;;) {
    last = conn.next();
    switch (last) {
      case srv::action::run: {
        const srv::job j = conn.take_job();
        jobs_seen.push_back(j);
        if (hold_jobs_)
          held.push_back(j);
        else
          conn.complete(j, j.what == srv::job::kind::fib ? srv::fib_expected(j.arg) : 0);
        break;
      }
      case srv::action::write: {
        const auto out = conn.output();
        REQUIRE(!out.empty());
        written.append(out.data(), out.size());
        write_sizes.push_back(out.size());
        conn.consume(out.size());
        break;
      }
      case srv::action::half_close:
        REQUIRE_FALSE(half_closed);
        half_closed = true;
        break;
      case srv::action::close:
        closed = true;
        return last;
      case srv::action::read:
      case srv::action::wait:
        return last;
    }
  }
}

void driver::send(std::string_view input, std::size_t step) {
  while (!input.empty()) {
    REQUIRE_MESSAGE(last == srv::action::read, "the connection did not want to read, it said ",
                    to_string(last));
    const auto buffer = conn.read_buffer();
    REQUIRE(!buffer.empty());
    const std::size_t n = std::min({input.size(), step, buffer.size()});
    std::copy_n(input.begin(), n, buffer.begin());
    conn.commit(n);
    input.remove_prefix(n);
    pump();
  }
}

void driver::eof() {
  REQUIRE(last == srv::action::read);
  conn.end_of_input();
  pump();
}

void driver::complete(std::size_t i) {
  REQUIRE(i < held.size());
  const auto& j = held[i];
  complete(i, j.what == srv::job::kind::fib ? srv::fib_expected(j.arg) : 0);
}

void driver::complete(std::size_t i, std::uint64_t value) {
  REQUIRE(i < held.size());
  conn.complete(held[i], value);
  pump();
}

std::vector<response> answers(srv::app& app, std::string_view input, std::size_t step,
                              const std::vector<bool>& head) {
  driver d(app);
  d.send(input, step);
  return d.responses(head);
}

std::string get(std::string_view target, std::string_view extra) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n" + std::string(extra) + "\r\n";
}

}  // namespace test
