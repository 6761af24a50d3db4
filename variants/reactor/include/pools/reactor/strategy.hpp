// SPDX-License-Identifier: MIT
// pools/reactor/strategy.hpp — the two classic ways to run Asio on N threads.
//
//   per_thread  N io_contexts, one thread each; work is handed out round-robin. This is Asio's
//               HTTP "server2": no lock is shared by all threads, and everything that belongs to
//               one connection stays on one thread, so its handlers never race. The price: no
//               load balancing — work posted to a busy context waits even if another is idle.
//   shared      One io_context run by N threads. This is "server3": any idle thread takes the
//               next handler, so load balances itself, but all threads share one queue and its
//               lock, and a connection's handlers may run on two threads at once unless they go
//               through a strand (pools/reactor/strand.hpp).
#pragma once

#include <optional>
#include <string_view>

namespace pools::reactor {

enum class strategy { per_thread, shared };

/// "per_thread" or "shared".
std::string_view to_string(strategy s) noexcept;

/// The inverse of to_string; std::nullopt for anything else (names are case-sensitive).
std::optional<strategy> parse_strategy(std::string_view name) noexcept;

}  // namespace pools::reactor
