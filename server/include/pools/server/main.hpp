// SPDX-License-Identifier: MIT
// pools/server/main.hpp — the main() every driver shares.
//
//   int main(int argc, char** argv) {
//     return pools::server::run({.name = "reactor", .summary = "..."}, argc, argv,
//                               [](pools::server::app& app) { /* pool, listener, wait */ });
//   }
//
// run() parses the command line (exit 2 on bad usage, 0 after --help), ignores SIGPIPE (a peer
// that vanishes must cost one failed write, not the process), logs the configuration, builds the
// app and calls serve(app) on the main thread. serve returning is a clean exit (0); an exception
// escaping it is logged and the exit code is 1.
//
// The contract of serve. pools::server::listener (listener.hpp) implements it once for every
// driver; a driver supplies its sessions (callback_session.hpp, suspending_session.hpp, or its own
// session_base) and runs the listener's executor until it is done:
//  1. Listen with pools::server::asio_support::listen() (it prints "listening on ADDR:PORT").
//  2. For each accepted socket make a pools::server::connection and run the loop of
//     connection.hpp until action::close.
//  3. On the first SIGINT or SIGTERM (boost::asio::signal_set): log it, stop accepting (close
//     the acceptor; a socket accepted in the meantime is closed unanswered), call
//     connection::shutdown() on every open connection on its own thread or strand (cancelling the
//     read when it returns true), and return from serve once every connection has closed. If
//     app.opts().shutdown_timeout passes first, drop what remains (close their sockets), log how
//     many were cut, and return once they have ended, which is as soon as the jobs they have in
//     flight end (the query limits bound them): the exit code is 0 either way. A second signal
//     drops at once, as the deadline does.
#pragma once

#include <pools/server/app.hpp>
#include <pools/server/cli.hpp>

#include <functional>

namespace pools::server {

int run(const program& prog, int argc, char** argv, const std::function<void(app&)>& serve);

}  // namespace pools::server
