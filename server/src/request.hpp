// SPDX-License-Identifier: MIT
// server/src/request.hpp — one parsed request, as the core keeps it (private to the core).
#pragma once

#include <string>

namespace pools::server::detail {

enum class method : unsigned char { get, head, post, other };

struct request {
  method verb = method::other;
  std::string method_name;  ///< as received (the access log shows it; 501 for unknown ones)
  std::string target;       ///< the raw request-target
  unsigned version = 11;    ///< 10 or 11
  bool keep_alive = true;   ///< HTTP/1.1 without "Connection: close", or 1.0 with keep-alive
  bool expect_continue = false;
  std::string content_type;
  std::string body;
};

}  // namespace pools::server::detail
