// SPDX-License-Identifier: MIT
// The textbook reactor beyond the conformance suite: fds and their callbacks, timers, the
// wake-up, the drain, and an echo driven entirely by callbacks.
#include <doctest/doctest.h>

#include <pools/reactor/textbook_pool.hpp>
#include <pools/testing/zero_threads.hpp>
#include <pools/wait_group.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using pools::reactor::textbook_pool;
using clock_type = std::chrono::steady_clock;

namespace {

// Two connected fds, non-blocking, closed at the end of the test (unless closed before: -1).
struct fd_pair {
  explicit fd_pair(bool socket) {
    int fds[2];
    // POSIX calls and fcntl, not Linux's pipe2() and SOCK_NONBLOCK: the portable build runs these too.
    const int rc = socket ? ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) : ::pipe(fds);
    REQUIRE(rc == 0);
    a = fds[0];
    b = fds[1];
    for (const int fd : fds) {
      REQUIRE(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
      REQUIRE(::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0);
    }
  }
  fd_pair(const fd_pair&) = delete;
  fd_pair& operator=(const fd_pair&) = delete;
  ~fd_pair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
  int a;  // a pipe's read end
  int b;  // a pipe's write end
};

void write_byte(int fd, char c = 'x') {
  REQUIRE(::write(fd, &c, 1) == 1);
}

// Reads one byte; false if none is waiting (EAGAIN).
bool read_byte(int fd) {
  char c;
  return ::read(fd, &c, 1) == 1;
}

}  // namespace

TEST_CASE("textbook_pool: zero threads is one per hardware thread; concurrency() is the thread count") {
  pools::testing::check_zero_threads_means_every_core([] { return textbook_pool(0); });
  textbook_pool pool(3);
  CHECK(pool.concurrency() == 3);
}

TEST_CASE("textbook_pool: a readable pipe runs its callback on the loop thread") {
  textbook_pool pool(1);  // one loop: every task and callback runs on the same thread
  std::thread::id loop_thread;
  pools::wait_group posted(1);
  pool.post([&] {
    loop_thread = std::this_thread::get_id();
    posted.done();
  });
  REQUIRE(posted.wait_for(10s));

  fd_pair pipe(false);
  pools::wait_group called(1);
  std::thread::id callback_thread;
  std::uint32_t seen_events = 0;
  pool.watch(pipe.a, POLLIN, [&](std::uint32_t events) {
    if (!read_byte(pipe.a)) return;
    callback_thread = std::this_thread::get_id();
    seen_events = events;
    called.done();
  });
  std::this_thread::sleep_for(20ms);
  CHECK(called.count() == 1);  // nothing written yet: the loop does not call
  write_byte(pipe.b);
  REQUIRE(called.wait_for(10s));
  CHECK(callback_thread == loop_thread);
  CHECK(callback_thread != std::this_thread::get_id());
  CHECK((seen_events & POLLIN) != 0);
  pool.unwatch(pipe.a);
}

TEST_CASE("textbook_pool: unwatch from another thread stops the callbacks") {
  textbook_pool pool(2);
  fd_pair pipe(false);
  std::atomic<int> calls{0};
  pools::wait_group first(1);
  pool.watch(pipe.a, POLLIN, [&](std::uint32_t) {
    if (!read_byte(pipe.a)) return;
    if (calls.fetch_add(1) == 0) first.done();
  });
  write_byte(pipe.b);
  REQUIRE(first.wait_for(10s));
  pool.unwatch(pipe.a);  // the byte was read: the loop holds no event for the fd
  write_byte(pipe.b);
  std::this_thread::sleep_for(100ms);
  CHECK(calls.load() == 1);
  CHECK(read_byte(pipe.a));                                  // the second byte is still there: nobody read it
  CHECK_THROWS_AS(pool.unwatch(pipe.a), std::system_error);  // no longer watched
}

TEST_CASE("textbook_pool: unwatch from its own callback is final, though the fd stays readable") {
  textbook_pool pool(2);
  fd_pair pipe(false);
  std::atomic<int> calls{0};
  pools::wait_group unwatched(1);
  // Level-triggered: a callback that does not read would be called again and again.
  pool.watch(pipe.a, POLLIN, [&](std::uint32_t) {
    calls.fetch_add(1);
    pool.unwatch(pipe.a);
    unwatched.done();
  });
  write_byte(pipe.b);
  REQUIRE(unwatched.wait_for(10s));
  std::this_thread::sleep_for(100ms);
  CHECK(calls.load() == 1);
  CHECK(read_byte(pipe.a));

  // Watched again, the fd gets the new callback.
  pools::wait_group again(1);
  pool.watch(pipe.a, POLLIN, [&](std::uint32_t) {
    if (read_byte(pipe.a)) again.done();
  });
  write_byte(pipe.b);
  CHECK(again.wait_for(10s));
  CHECK(calls.load() == 1);
  pool.unwatch(pipe.a);
}

TEST_CASE(
    "textbook_pool: a bad fd, a regular file or a double watch throws system_error from epoll_ctl (or poll "
    "watch)") {
  textbook_pool pool(2);
  auto nothing = [](std::uint32_t) {};
  auto error_of = [&](int fd) {
    try {
      pool.watch(fd, POLLIN, nothing);
    } catch (const std::system_error& e) {
      const std::string what = e.what();  // names the call: epoll's, or the portable poller's
      CHECK((what.find("epoll_ctl") != std::string::npos || what.find("poll watch") != std::string::npos));
      return e.code().value();
    }
    return 0;
  };
  CHECK(error_of(-1) == EBADF);
  fd_pair pipe(false);
  const int closed = ::dup(pipe.a);
  REQUIRE(closed >= 0);
  ::close(closed);
  CHECK(error_of(closed) == EBADF);

  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  CHECK(error_of(::fileno(file)) == EPERM);  // epoll cannot watch a regular file
  std::fclose(file);

  pool.watch(pipe.a, POLLIN, nothing);
  CHECK(error_of(pipe.a) == EEXIST);
  pool.unwatch(pipe.a);
  try {
    pool.unwatch(pipe.a);
    FAIL("unwatch of an fd that is not watched must throw");
  } catch (const std::system_error& e) {
    CHECK(e.code().value() == ENOENT);
  }
}

TEST_CASE("textbook_pool: timers fire in deadline order, and never early") {
  textbook_pool pool(1);  // one loop: its timers are ordered
  const std::array<int, 6> delays_ms{50, 10, 40, 20, 30, 20};
  std::mutex m;
  std::vector<std::pair<int, clock_type::duration>> fired;  // (delay, when, from start)
  pools::wait_group all(static_cast<std::int64_t>(delays_ms.size()));
  const auto start = clock_type::now();
  for (int d : delays_ms) {
    pool.post_after(std::chrono::milliseconds(d), [&, d] {
      std::lock_guard lock(m);
      fired.emplace_back(d, clock_type::now() - start);
      all.done();
    });
  }
  REQUIRE(all.wait_for(10s));
  std::lock_guard lock(m);
  REQUIRE(fired.size() == delays_ms.size());
  for (std::size_t i = 0; i < fired.size(); ++i) {
    CHECK(fired[i].second >= std::chrono::milliseconds(fired[i].first));  // not early
    if (i > 0) CHECK(fired[i - 1].first <= fired[i].first);               // in deadline order
  }
}

TEST_CASE("textbook_pool: a post wakes a loop blocked in the poller, with or without a far timer") {
  textbook_pool pool(1);
  for (const bool far_timer : {false, true}) {
    CAPTURE(far_timer);
    // With no timer the loop sleeps with no timeout at all: only the wake-up (eventfd, pipe) can wake it.
    if (far_timer) pool.post_after(1h, [] {});  // destroyed unrun with the pool
    std::this_thread::sleep_for(50ms);          // the loop is idle in the poller now
    pools::wait_group ran(1);
    clock_type::time_point started{};
    const auto posted = clock_type::now();
    pool.post([&] {
      started = clock_type::now();
      ran.done();
    });
    REQUIRE(ran.wait_for(10s));
    CHECK(started - posted < 2s);  // a bound far above a wake-up (µs), far below "never"
  }
}

TEST_CASE("textbook_pool: a new earliest timer wakes a loop sleeping on a later one") {
  textbook_pool pool(1);
  pool.post_after(1h, [] {});
  std::this_thread::sleep_for(50ms);  // the loop sleeps with a one-hour timeout now
  pools::wait_group fired(1);
  const auto start = clock_type::now();
  clock_type::time_point at{};
  pool.post_after(20ms, [&] {
    at = clock_type::now();
    fired.done();
  });
  REQUIRE(fired.wait_for(10s));
  CHECK(at - start >= 20ms);
  CHECK(at - start < 5s);
}

TEST_CASE(
    "textbook_pool: an exception from a task, a timer or an fd callback is reported; the loop goes on") {
  reactor_test::exception_counter counter;
  textbook_pool pool(2);
  fd_pair pipe(false);
  pool.post([] { throw std::runtime_error("boom"); });
  pool.post_after(1ms, [] { throw std::runtime_error("boom"); });
  pool.watch(pipe.a, POLLIN, [&](std::uint32_t) {
    if (read_byte(pipe.a)) throw std::runtime_error("boom");
  });
  write_byte(pipe.b);
  CHECK(reactor_test::wait_until([&] { return counter.reported() == 3; }));
  pools::wait_group after(2);
  for (int i = 0; i < 2; ++i) pool.post([&] { after.done(); });
  CHECK(after.wait_for(10s));
  pool.unwatch(pipe.a);
}

TEST_CASE("textbook_pool: destruction drains tasks and due timers, drops timers not yet due") {
  const int chains = 8;
  const int links = reactor_test::scaled(2000);
  std::atomic<int> ran{0};
  std::atomic<int> due_timers{0};
  std::atomic<int> far_timers_ran{0};
  auto far_timer_destroyed = std::make_shared<int>(0);
  std::weak_ptr<int> watch_far(far_timer_destroyed);
  std::atomic<bool> release{false};
  std::thread releaser;
  {
    textbook_pool pool(2);
    pools::wait_group held(2);
    // Hold both loops, so that everything below is still queued when the destructor starts.
    for (int i = 0; i < 2; ++i) {
      pool.post([&] {
        held.done();
        while (!release.load()) std::this_thread::yield();
      });
    }
    REQUIRE(held.wait_for(10s));
    for (int c = 0; c < chains; ++c) {
      // Each link posts the next one: work posted while the pool drains.
      struct link {
        textbook_pool* pool;
        std::atomic<int>* ran;
        int left;
        void operator()() {
          ran->fetch_add(1);
          if (left > 1) pool->post(link{pool, ran, left - 1});
        }
      };
      pool.post(link{&pool, &ran, links});
    }
    pool.post([&] { pool.post_after(0ms, [&] { due_timers.fetch_add(1); }); });
    pool.post_after(
        1h, [&far_timers_ran, keep = std::move(far_timer_destroyed)] { far_timers_ran.fetch_add(1); });
    releaser = std::thread([&] {
      std::this_thread::sleep_for(50ms);
      release.store(true);
    });
  }  // the destructor starts while the loops are still held
  releaser.join();
  CHECK(ran.load() == chains * links);
  CHECK(due_timers.load() == 1);
  CHECK(far_timers_ran.load() == 0);
  CHECK(watch_far.expired());  // dropped, not leaked
}

TEST_CASE("textbook_pool: echo over a socketpair, driven entirely by callbacks") {
  // The test thread only starts it and waits. The client writes a message, the server's callback
  // echoes what it reads, the client's callback counts the echo and writes the next message;
  // after the last one the client shuts down its side, the server sees EOF, unwatches, closes.
  // Nobody blocks in read(): every step is the loop calling back.
  textbook_pool pool(2);
  fd_pair sockets(true);
  const int server = sockets.a;
  const int client = sockets.b;
  const int messages = reactor_test::scaled(1000);
  const std::string message = "hello, reactor";
  // Touched by callbacks on both loops; what orders them is the socket, which TSan cannot see.
  std::atomic<std::size_t> echoed{0};  // bytes back at the client
  std::atomic<int> sent{0};
  pools::wait_group server_closed(1);
  pools::wait_group client_done(1);

  auto send_next = [&] {
    sent.fetch_add(1);
    CHECK(::write(client, message.data(), message.size()) == static_cast<ssize_t>(message.size()));
  };
  pool.watch(server, POLLIN, [&](std::uint32_t) {
    char buf[256];
    const ssize_t n = ::read(server, buf, sizeof buf);
    if (n > 0) {
      CHECK(::write(server, buf, static_cast<std::size_t>(n)) == n);
    } else if (n == 0) {  // EOF: the client is done
      pool.unwatch(server);
      ::close(server);
      server_closed.done();
    }
  });
  pool.watch(client, POLLIN, [&](std::uint32_t) {
    char buf[256];
    const ssize_t n = ::read(client, buf, sizeof buf);
    if (n <= 0) return;
    const std::size_t total = echoed.fetch_add(static_cast<std::size_t>(n)) + static_cast<std::size_t>(n);
    if (total < static_cast<std::size_t>(sent.load()) * message.size()) return;  // more to come
    if (sent.load() < messages) {
      send_next();
    } else {
      pool.unwatch(client);
      ::shutdown(client, SHUT_WR);
      client_done.done();
    }
  });
  pool.post(send_next);  // the first message, from a loop thread too
  REQUIRE(client_done.wait_for(30s));
  REQUIRE(server_closed.wait_for(30s));
  sockets.a = -1;  // closed by the server's callback
  CHECK(sent.load() == messages);
  CHECK(echoed.load() == static_cast<std::size_t>(messages) * message.size());
}
