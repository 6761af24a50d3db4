// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 06's hidden scenario (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on a scenario the students did not tune for; a
// student's own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The scenario: the server kicks a session whose WRITE is pending (the visible tests kick idle
// sessions, whose read is pending). The client sends a message; the check runs exactly one
// handler, the read's, which starts the echo's write; then the server kicks the session. The
// write's handler runs later, with the session dropped by the server: it must still find it alive,
// and the session must be gone once that handler has run.
// Included by check.cpp after its helpers: it uses run_ready and current_step.
#pragma once

namespace {

void hidden_tests(course::report& report) {
  course::deadline limit("kick a session whose write is pending", 30s, "a read that never completes");
  boost::asio::io_context io;
  echo_server server;
  socket_type server_end(io), client(io);
  boost::asio::local::connect_pair(server_end, client);
  const int id = server.add(std::move(server_end));
  run_ready(io);
  current_step = "hidden: kicked while its write is pending";
  report.test("hidden: kicked while its write is pending");
  boost::asio::write(client, boost::asio::buffer(std::string("write pending")));
  // One handler: the read's, which starts the write (its handler is queued, not run inline).
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  std::size_t ran = 0;
  while (ran == 0 && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    ran = io.run_one_for(10ms);
  }
  report.require(ran == 1, "the session's read completed with the client's message");
  server.kick(id);
  const auto pending = echo_server::sessions_alive();
  report.require(pending == 1,
                 pending == 1
                     ? "while its write is pending, the kicked session is alive (the handler holds it)"
                     : "the kicked session was destroyed while its write was still pending: the "
                       "write's handler holds a dangling this");
  run_ready(io);
  const auto alive = echo_server::sessions_alive();
  report.require(alive == 0, "once its pending handlers have run, the kicked session is destroyed (" +
                                 std::to_string(alive) + " alive)");
}

}  // namespace
