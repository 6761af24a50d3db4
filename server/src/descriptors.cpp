// SPDX-License-Identifier: MIT
#include <pools/server/descriptors.hpp>
#include <pools/server/log.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace pools::server {

std::size_t descriptors_per_connection(const options& o) {
  return o.root.empty() ? 1 : 2;
}

std::size_t reserved_descriptors(const options& o) {
  constexpr std::size_t standard_streams = 3, listening_socket = 1, signal_pipe = 2;
  constexpr std::size_t per_io_context = 3, spare = 16;
  return standard_streams + listening_socket + signal_pipe + per_io_context * (o.threads + 1) + spare;
}

descriptor_plan plan_descriptors(const options& o, std::uint64_t soft, std::uint64_t hard) {
  descriptor_plan p;
  const std::uint64_t per = descriptors_per_connection(o);
  const std::uint64_t reserved = reserved_descriptors(o);
  p.needed = reserved + per * o.max_connections;
  p.soft_limit = soft;
  p.max_connections = o.max_connections;
  if (p.needed <= soft) return p;
  if (p.needed <= hard) {  // raise only as far as needed: the limit still catches a leak
    p.soft_limit = p.needed;
    p.raise = true;
    return p;
  }
  // Even the hard limit is too low (only a privileged process may raise it): serve fewer.
  if (hard > soft) {
    p.soft_limit = hard;
    p.raise = true;
  }
  // At least one connection, however low the limit: the server still starts, and says so.
  p.max_connections = static_cast<std::size_t>(
      std::max<std::uint64_t>(1, p.soft_limit > reserved ? (p.soft_limit - reserved) / per : 0));
  p.lower = true;
  return p;
}

void fit_descriptor_limit(options& o) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    log_warn("getrlimit(RLIMIT_NOFILE): {}; --max-connections {} left as it is", std::strerror(errno),
             o.max_connections);
    return;
  }
  auto plan = plan_descriptors(o, lim.rlim_cur, lim.rlim_max);
  if (plan.raise) {
    const rlimit raised{static_cast<rlim_t>(plan.soft_limit), lim.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      log_info("raised the open-file limit (RLIMIT_NOFILE) from {} to {} (hard limit {}) for {} connections",
               lim.rlim_cur, plan.soft_limit, lim.rlim_max, plan.max_connections);
    } else {  // not expected (an unprivileged process may raise up to the hard limit)
      log_warn("setrlimit(RLIMIT_NOFILE, {}): {}", plan.soft_limit, std::strerror(errno));
      plan = plan_descriptors(o, lim.rlim_cur, lim.rlim_cur);
    }
  }
  if (plan.lower) {
    log_warn(
        "--max-connections {} needs {} open files, but the limit (RLIMIT_NOFILE) is {} (hard limit {}): "
        "serving at most {} connections; raise the limit (ulimit -n) to serve more",
        o.max_connections, plan.needed, plan.soft_limit, lim.rlim_max, plan.max_connections);
    o.max_connections = plan.max_connections;
  }
}

}  // namespace pools::server
