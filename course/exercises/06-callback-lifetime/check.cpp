// SPDX-License-Identifier: MIT
// check.cpp — the grader of exercise 06-callback-lifetime (scripts/grade-exercise.sh
// 06-callback-lifetime, which builds it with AddressSanitizer). Not for editing: your code is
// session.hpp.
//
// Everything runs on this one thread, which also runs the io_context, so the order of events is
// the same in every run: no timing decides whether the bug shows.
//  1. echo: a session on one end of a socket pair; the check writes on the other end, runs the
//     io_context until the answer is there, and reads it back, twice (the loop must go on).
//  2. kick: with the session's read pending, the server kicks it out. Its read handler is then
//     queued with operation_aborted and runs when the check runs the io_context again: on a
//     session that must still be alive at that moment, and must be gone right after.
//  3. many: ten sessions, some kicked while idle, some whose client hung up first.
// At the end no session may be alive (echo_server::sessions_alive() == 0, counted by the allocator
// echo_server.hpp makes them with, not by session.hpp): a handler that keeps its session
// alive for ever (a shared_ptr cycle) is a leak, which LeakSanitizer reports too.
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <cctype>
#include <chrono>
#include <course/check.hpp>
#include <cstdio>
#include <echo_server.hpp>
#include <session.hpp>  // <>, not "": quotes would find the start's copy next to this file first
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define COURSE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COURSE_ASAN 1
#endif
#endif
#ifndef COURSE_ASAN
#define COURSE_ASAN 0
#endif
#if COURSE_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace {

using namespace std::chrono_literals;
using exercise::echo_server;
using exercise::socket_type;

const char* current_step = "starting";

#if COURSE_ASAN
// Called by AddressSanitizer after its report, before it ends the process: the report's three
// stacks say where; this says which step of the check it was.
void on_asan_error() {
  std::printf(
      "  FAIL  %s: AddressSanitizer stopped the program (its report is above). A completion handler "
      "ran on a session that had already been destroyed: the read or write was still pending when "
      "the server dropped its shared_ptr, and [this] does not keep the session alive\n"
      "FAIL: exercise 06-callback-lifetime (a heap-use-after-free in a completion handler)\n",
      current_step);
  std::fflush(stdout);
  if (course::active_report != nullptr) {
    course::active_report->abandon(std::string(current_step) +
                                   ": AddressSanitizer stopped the program (a "
                                   "completion handler ran on a destroyed session)");
  }
}
#endif

// Runs ready handlers until none is left (nothing here waits on the network: a socket pair).
void run_ready(boost::asio::io_context& io) {
  io.restart();
  while (io.poll() > 0) {
  }
}

// Sends `text` to the session at the other end of `client` and returns what comes back (as many
// bytes as were sent), running the io_context until they are there; "" after 5 s without them.
std::string echo(boost::asio::io_context& io, socket_type& client, const std::string& text) {
  boost::asio::write(client, boost::asio::buffer(text));
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (client.available() < text.size() && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    io.run_one_for(10ms);
  }
  if (client.available() < text.size()) return "";
  std::string answer(text.size(), '\0');
  boost::asio::read(client, boost::asio::buffer(answer));
  run_ready(io);  // on_write's handler: the session goes back to reading
  return answer;
}

// True when the client's end sees the end of the stream (the session's socket is closed).
bool sees_eof(socket_type& client) {
  char byte = 0;
  boost::system::error_code ec;
  client.read_some(boost::asio::buffer(&byte, 1), ec);
  return ec == boost::asio::error::eof;
}

void echo_and_kick(course::report& report) {
  course::deadline limit("echo, then kick an idle session", 30s,
                         "a read that never completes (the session stopped reading after an echo?)");
  boost::asio::io_context io;
  echo_server server;
  socket_type server_end(io), client(io);
  boost::asio::local::connect_pair(server_end, client);
  const int id = server.add(std::move(server_end));
  run_ready(io);

  current_step = "echo";
  report.test("echo: a session echoes in upper case");
  const std::string first = echo(io, client, "hello, reactor");
  const std::string second = echo(io, client, "once more");
  report.require(first == "HELLO, REACTOR" && second == "ONCE MORE",
                 "echo: two messages come back in upper case (got \"" + first + "\" and \"" + second + "\")");
  report.require(server.echoed(id) == 23, "echo: the session counted " + std::to_string(server.echoed(id)) +
                                              " bytes echoed, expected 23");

  current_step = "kick: the server kicked an idle session and its aborted read handler ran";
  report.test("kick: a kicked session is destroyed once its handler has run");
  std::cout << "-- kick: the server drops an idle session whose read is pending; then its handler runs"
            << '\n';
  server.kick(id);
  // The server has let go of it, but its read is still pending: the handler that runs next must
  // find it alive. Checked here, not only by AddressSanitizer: a handler that returns on the error
  // code before touching anything ("if (ec) return;") reads no freed memory, yet ran on a dead session.
  const auto pending = echo_server::sessions_alive();
  report.require(pending == 1,
                 pending == 1
                     ? "kick: while its aborted read is pending, the session is alive (the handler holds it)"
                     : "kick: the session was destroyed while its read was still pending: the handler "
                       "that runs next holds a dangling this (an `if (ec) return;` only avoids touching "
                       "it; the handler must keep the session alive)");
  run_ready(io);  // the read's handler runs now, with operation_aborted
  const auto alive = echo_server::sessions_alive();
  report.require(alive == 0, "kick: once its aborted handler has run, the session is destroyed" +
                                 (alive == 0 ? std::string()
                                             : ": " + std::to_string(alive) +
                                                   " alive, expected 0 (a handler or a member that keeps it "
                                                   "alive for ever: a cycle?)"));
  report.require(sees_eof(client), "kick: the client sees the connection closed");
}

void many(course::report& report) {
  course::deadline limit("ten sessions", 30s, "a read that never completes");
  boost::asio::io_context io;
  echo_server server;
  std::vector<socket_type> clients;
  std::vector<int> ids;
  for (int i = 0; i < 10; ++i) {
    socket_type server_end(io), client(io);
    boost::asio::local::connect_pair(server_end, client);
    ids.push_back(server.add(std::move(server_end)));
    clients.push_back(std::move(client));
  }
  run_ready(io);
  current_step = "ten sessions: echo on each";
  report.test("ten sessions: echo, hang-ups and kicks, none left alive");
  bool all_echoed = true;
  for (int i = 0; i < 10; ++i) {
    const std::string text = "session " + std::to_string(i);
    std::string expected = text;
    for (char& c : expected) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    all_echoed = echo(io, clients[static_cast<std::size_t>(i)], text) == expected && all_echoed;
  }
  report.require(all_echoed, "ten sessions: each echoes its own client's message");
  // Even ones: the client hangs up, the session sees the end of the stream and stops; then the
  // server forgets it. Odd ones: kicked while their read is pending.
  current_step = "ten sessions: clients hang up, the server kicks the others";
  for (int i = 0; i < 10; i += 2) clients[static_cast<std::size_t>(i)].close();
  run_ready(io);
  for (int i = 0; i < 10; ++i) server.kick(ids[static_cast<std::size_t>(i)]);
  run_ready(io);
  const auto alive = echo_server::sessions_alive();
  report.require(server.size() == 0 && alive == 0,
                 "ten sessions: after hang-ups and kicks, and their handlers, no session is alive" +
                     (alive == 0 ? std::string() : ": " + std::to_string(alive) + " alive"));
}

}  // namespace

// The hidden scenario: only in the instructor's graders, which build the check with
// course/instructor/hidden/06-callback-lifetime/ on the include path; the hand-out has no such
// folder, and a student's run says the test exists and what it is worth (its rubric.json entry).
#if __has_include(<hidden_tests.hpp>)
#include <hidden_tests.hpp>
#define COURSE_HIDDEN_TESTS 1
#endif

int main() {
#if COURSE_ASAN
  __asan_set_death_callback(on_asan_error);
#endif
  course::report report("06-callback-lifetime");
#if !COURSE_ASAN
  report.note(
      "built without AddressSanitizer: a use-after-free can go unseen here. Grade with "
      "scripts/grade-exercise.sh 06-callback-lifetime, which builds with it (build-asan/)");
#endif
  echo_and_kick(report);
  many(report);
#ifdef COURSE_HIDDEN_TESTS
  hidden_tests(report);
#endif
  current_step = "the end";
  return report.finish();
}
