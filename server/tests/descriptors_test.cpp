// SPDX-License-Identifier: MIT
// fit_descriptor_limit's arithmetic (descriptors.hpp): when --max-connections fits RLIMIT_NOFILE,
// when the soft limit is raised (and how far), when the connections are lowered (and to what).
#include <doctest/doctest.h>

#include <pools/server/descriptors.hpp>

#include <cstdint>
#include <limits>

namespace srv = pools::server;

namespace {
srv::options with(std::size_t max_connections, std::size_t threads, bool root = false) {
  srv::options o;
  o.max_connections = max_connections;
  o.threads = threads;
  if (root) o.root = "/srv";
  return o;
}
}  // namespace

TEST_CASE("descriptors: what is reserved, what a connection costs") {
  // 3 standard streams + 1 listener + 2 signal pipe + 3 per io_context (threads + 1) + 16 spare.
  CHECK(srv::reserved_descriptors(with(100, 1)) == 3 + 1 + 2 + 3 * 2 + 16);
  CHECK(srv::reserved_descriptors(with(100, 8)) == 3 + 1 + 2 + 3 * 9 + 16);
  CHECK(srv::descriptors_per_connection(with(100, 1)) == 1);
  CHECK(srv::descriptors_per_connection(with(100, 1, true)) == 2);  // the socket and a static file
}

TEST_CASE("descriptors: enough under the soft limit, nothing changes") {
  const auto o = with(1000, 2);
  const auto p = srv::plan_descriptors(o, 4096, 4096);
  CHECK(p.needed == srv::reserved_descriptors(o) + 1000);
  CHECK_FALSE(p.raise);
  CHECK_FALSE(p.lower);
  CHECK(p.soft_limit == 4096);
  CHECK(p.max_connections == 1000);
  const auto unlimited = std::numeric_limits<std::uint64_t>::max();  // RLIM_INFINITY
  CHECK_FALSE(srv::plan_descriptors(with(1'000'000, 2, true), unlimited, unlimited).raise);
}

TEST_CASE("descriptors: under the hard limit only, the soft limit is raised as far as needed") {
  const auto o = with(10'000, 2);
  const auto p = srv::plan_descriptors(o, 1024, 1'048'576);
  CHECK(p.raise);
  CHECK_FALSE(p.lower);
  CHECK(p.soft_limit == p.needed);
  CHECK(p.needed == srv::reserved_descriptors(o) + 10'000);
  CHECK(p.max_connections == 10'000);
}

TEST_CASE("descriptors: over the hard limit, the soft limit goes to it and the connections are lowered") {
  const auto o = with(10'000, 2, true);
  const auto reserved = srv::reserved_descriptors(o);
  const auto p = srv::plan_descriptors(o, 1024, 4096);
  CHECK(p.raise);
  CHECK(p.lower);
  CHECK(p.soft_limit == 4096);
  CHECK(p.max_connections == (4096 - reserved) / 2);
  CHECK(p.needed == reserved + 2 * 10'000);
  const auto same = srv::plan_descriptors(o, 4096, 4096);  // soft = hard: lowered only
  CHECK_FALSE(same.raise);
  CHECK(same.max_connections == (4096 - reserved) / 2);
}

TEST_CASE("descriptors: a limit below what is reserved still leaves one connection") {
  const auto p = srv::plan_descriptors(with(100, 64), 20, 20);
  CHECK(p.lower);
  CHECK(p.max_connections == 1);
}
