// SPDX-License-Identifier: MIT
// pools/server/descriptors.hpp — fitting --max-connections to the descriptor limit at start-up.
//
// Every connection is a socket, and a connection streaming a static file holds the file open as
// well: a server whose --max-connections is above what RLIMIT_NOFILE allows runs out of
// descriptors at accept() before it reaches its own cap (the listener then pauses accepting,
// listener.hpp, but the cap was a promise the process could not keep). So run() calls
// fit_descriptor_limit() before it serves, as nginx's worker_rlimit_nofile does by hand:
//  - enough under the soft limit: nothing changes;
//  - enough under the hard limit: the soft limit is raised to what is needed (log: info);
//  - not even under the hard limit: --max-connections is lowered to what the hard limit allows
//    (log: a warning naming both numbers and the limit).
#pragma once

#include <pools/server/options.hpp>

#include <cstddef>
#include <cstdint>

namespace pools::server {

/// Descriptors one connection may hold: its socket, and a static file it streams (only with
/// --root: without one, /static is always 404).
std::size_t descriptors_per_connection(const options& o);

/// Descriptors the server holds besides its connections, with o.threads threads. Counted, at
/// most: stdin, stdout, stderr (3); the listening socket (1); Asio's signal_set self-pipe (2); per
/// io_context an epoll descriptor, its eventfd and its timerfd (3), with at most threads + 1
/// io_contexts (fibers and coroutines: one per worker and the control one; reactor per_thread: one
/// per thread; the others: one); and 16 to spare: the --trace file written at exit, a file the C
/// library opens, and connections being refused with 503 (each is accepted, answered, closed).
std::size_t reserved_descriptors(const options& o);

/// What to do about RLIMIT_NOFILE (soft, hard) for these options; pure, for the tests.
struct descriptor_plan {
  std::uint64_t needed = 0;         ///< reserved + o.max_connections x per connection
  std::uint64_t soft_limit = 0;     ///< the soft limit to run with
  bool raise = false;               ///< soft_limit is above the current soft limit: setrlimit
  std::size_t max_connections = 0;  ///< o.max_connections, or what the hard limit allows
  bool lower = false;               ///< max_connections is below o.max_connections
};
descriptor_plan plan_descriptors(const options& o, std::uint64_t soft, std::uint64_t hard);

/// Reads RLIMIT_NOFILE, applies plan_descriptors (setrlimit, or a lower o.max_connections) and
/// logs what it did. Called by run() before serve.
void fit_descriptor_limit(options& o);

}  // namespace pools::server
