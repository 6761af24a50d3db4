// SPDX-License-Identifier: MIT
// Connection-style objects: lifetimes owned by handlers, strands, the registry.
//
// These tests are written to fail loudly under the asan preset if the helpers get lifetimes
// wrong: handlers touch their object's members after the last outside reference is gone (a
// use-after-free if the handler did not own it), and every test ends by checking that the live
// count of each type is back to zero (a leak or a cycle otherwise; LeakSanitizer agrees).
#include <doctest/doctest.h>

#include <pools/reactor/connection.hpp>
#include <pools/reactor/connection_registry.hpp>
#include <pools/reactor/counted.hpp>
#include <pools/reactor/executor.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using pools::reactor::connection;
using pools::reactor::counted;
using pools::reactor::per_thread_executor;
using pools::reactor::shared_executor;
namespace asio = boost::asio;
using error_code = boost::system::error_code;
using local_socket = asio::local::stream_protocol::socket;

namespace {

// ---- an object kept alive by a pending timer ----------------------------------------------
struct waiter final : connection<waiter>, counted<waiter> {
  explicit waiter(asio::any_io_executor ex) : connection(ex), timer(ex) {}

  void wait_strong(std::chrono::milliseconds d) {
    timer.expires_after(d);
    timer.async_wait(bind(&waiter::on_timer));
  }
  void wait_weak(std::chrono::milliseconds d) {
    timer.expires_after(d);
    timer.async_wait(bind_weak(&waiter::on_timer));
  }
  void cancel_later() { post(&waiter::cancel); }

  void on_timer(error_code ec) {
    // Touch members: under ASan this is where a handler that did not own its object would fail.
    history.push_back(ec ? 'a' : 'f');
    std::fill(scratch.begin(), scratch.end(), static_cast<char>(history.size()));
    fired.fetch_add(1);
    if (throw_in_handler) throw std::runtime_error("boom");
  }
  void cancel() { timer.cancel(); }

  asio::steady_timer timer;
  std::string history;
  std::vector<char> scratch = std::vector<char>(4096);
  bool throw_in_handler = false;
  static inline std::atomic<int> fired{0};
};

// ---- an echo server session and its client, over a socket pair ----------------------------
struct echo_session final : connection<echo_session>, counted<echo_session> {
  explicit echo_session(local_socket s) : connection(s.get_executor()), socket_(std::move(s)) {}
  void start() { read(); }
  void close() {
    error_code ignored;
    socket_.close(ignored);
  }

 private:
  void read() { socket_.async_read_some(asio::buffer(buffer_), bind(&echo_session::on_read)); }
  void on_read(error_code ec, std::size_t n) {
    if (ec) return;  // eof or closed: no new operation, so the last owner goes away
    asio::async_write(socket_, asio::buffer(buffer_, n), bind(&echo_session::on_write));
  }
  void on_write(error_code ec, std::size_t) {
    if (!ec) read();
  }
  local_socket socket_;
  std::array<char, 256> buffer_{};
};

// What the clients report; shared, so no handler refers to a test's local.
struct echo_results {
  std::atomic<std::int64_t> echoed{0};
  std::atomic<int> mismatches{0}, errors{0};
  pools::wait_group finished;
};

struct echo_client final : connection<echo_client>, counted<echo_client> {
  echo_client(local_socket s, int rounds, std::shared_ptr<echo_results> r)
      : connection(s.get_executor()), socket_(std::move(s)), rounds_(rounds), results_(std::move(r)) {}
  void start() { write(); }

 private:
  void write() {
    out_ = "message " + std::to_string(round_) + " of " + std::to_string(rounds_);
    in_.assign(out_.size(), '\0');
    asio::async_write(socket_, asio::buffer(out_), bind(&echo_client::on_write));
  }
  void on_write(error_code ec, std::size_t) {
    if (ec) return fail();
    asio::async_read(socket_, asio::buffer(in_), bind(&echo_client::on_read));
  }
  void on_read(error_code ec, std::size_t n) {
    if (ec) return fail();
    if (in_ != out_) results_->mismatches.fetch_add(1);
    results_->echoed.fetch_add(static_cast<std::int64_t>(n));
    if (++round_ < rounds_) return write();
    error_code ignored;
    socket_.shutdown(local_socket::shutdown_send, ignored);  // the server reads eof and ends
    results_->finished.done();
  }
  void fail() {
    results_->errors.fetch_add(1);
    results_->finished.done();
  }
  local_socket socket_;
  int rounds_, round_ = 0;
  std::string out_, in_;
  std::shared_ptr<echo_results> results_;
};

// ---- a loop made of posts: the right way to write a self-re-posting callback ---------------
struct countdown final : connection<countdown>, counted<countdown> {
  countdown(asio::any_io_executor ex, int n, std::shared_ptr<pools::wait_group> done)
      : connection(std::move(ex)), left(n), done_(std::move(done)) {}
  void start() { post(&countdown::step); }
  void step() {
    if (--left > 0) return post(&countdown::step);  // each iteration's handler owns *this
    done_->done();
  }
  int left;
  std::shared_ptr<pools::wait_group> done_;
};

// ---- stored callbacks: the cycle, and the weak way out ----------------------------------------
struct hooked final : connection<hooked>, counted<hooked> {
  explicit hooked(asio::any_io_executor ex) : connection(std::move(ex)) {}
  void store_strong() { hook = bind(&hooked::ping); }
  void store_weak() { hook = bind_weak(&hooked::ping); }
  void ping() { ++pings; }
  std::function<void()> hook;
  int pings = 0;
};

// ---- arguments by value -----------------------------------------------------------------------
struct receiver final : connection<receiver>, counted<receiver> {
  receiver(asio::any_io_executor ex, std::shared_ptr<pools::wait_group> done)
      : connection(std::move(ex)), done_(std::move(done)) {}
  void send(const std::string& text, int value) { post(&receiver::take, text, std::make_unique<int>(value)); }
  void take(std::string text, std::unique_ptr<int> value) {
    got = text + "=" + std::to_string(*value);
    done_->done();
  }
  std::string got;
  std::shared_ptr<pools::wait_group> done_;
};

bool all_freed() {
  return waiter::live() == 0 && echo_session::live() == 0 && echo_client::live() == 0 &&
         countdown::live() == 0 && hooked::live() == 0 && receiver::live() == 0;
}

}  // namespace

TEST_CASE_TEMPLATE("connection: a handler runs after its owner's last outside reference is gone", E,
                   per_thread_executor, shared_executor) {
  REQUIRE(all_freed());
  waiter::fired = 0;
  {
    E ex(2);
    std::weak_ptr<waiter> observer;
    {
      auto w = std::make_shared<waiter>(pools::reactor::make_strand(ex));
      w->wait_strong(30s);  // cancelled below; bounded if the cancel were lost
      observer = w;
    }  // the last outside reference is gone; the pending wait owns the waiter
    CHECK(waiter::live() == 1);
    REQUIRE_FALSE(observer.expired());
    if (auto w = observer.lock()) w->cancel_later();  // now the handler runs (aborted), touching members

    auto fast = std::make_shared<waiter>(pools::reactor::make_strand(ex));
    fast->wait_strong(2ms);
    fast.reset();  // fires normally, after the reset
    ex.stop();
  }
  CHECK(waiter::fired.load() == 2);
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("connection: bind_weak does not keep its object alive", E, per_thread_executor,
                   shared_executor) {
  REQUIRE(all_freed());
  waiter::fired = 0;
  {
    E ex(2);
    auto w = std::make_shared<waiter>(pools::reactor::make_strand(ex));
    w->wait_weak(30s);
    const std::weak_ptr<waiter> observer = w;
    w.reset();
    CHECK(waiter::live() == 0);  // freed at once: the pending handler only observes it
    if (auto still = observer.lock()) still->cancel_later();  // only if that failed: don't drain for an hour
  }  // the timer's destruction aborted the wait; its handler found nothing and did nothing
  CHECK(waiter::fired.load() == 0);
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("connection: an exception in a handler is reported and still frees the object", E,
                   per_thread_executor, shared_executor) {
  REQUIRE(all_freed());
  reactor_test::exception_counter counter;
  {
    E ex(2);
    auto w = std::make_shared<waiter>(pools::reactor::make_strand(ex));
    w->throw_in_handler = true;
    w->wait_strong(1ms);
  }
  CHECK(counter.reported() == 1);
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("connection: echo over socket pairs; every object is freed when the peers close", E,
                   per_thread_executor, shared_executor) {
  REQUIRE(all_freed());
  const int pairs = 8;
  const int rounds = reactor_test::scaled(300);
  auto results = std::make_shared<echo_results>();
  results->finished.add(pairs);
  std::int64_t expected = 0;
  {
    E ex(3);
    for (int p = 0; p < pairs; ++p) {
      local_socket server(pools::reactor::make_strand(ex)), client(pools::reactor::make_strand(ex));
      asio::local::connect_pair(server, client);
      std::make_shared<echo_session>(std::move(server))->start();
      std::make_shared<echo_client>(std::move(client), rounds, results)->start();
    }
    for (int r = 0; r < rounds; ++r) {
      expected += static_cast<std::int64_t>(
          ("message " + std::to_string(r) + " of " + std::to_string(rounds)).size());
    }
    expected *= pairs;
    CHECK(results->finished.wait_for(60s));
  }  // the sessions end on eof; the drain waits for that
  CHECK(results->errors.load() == 0);
  CHECK(results->mismatches.load() == 0);
  CHECK(results->echoed.load() == expected);
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("connection: a loop of posts owns its object, and ends", E, per_thread_executor,
                   shared_executor) {
  REQUIRE(all_freed());
  const int loops = 4, steps = reactor_test::scaled(10'000);
  auto done = std::make_shared<pools::wait_group>(loops);
  {
    E ex(2);
    for (int i = 0; i < loops; ++i)
      std::make_shared<countdown>(pools::reactor::make_strand(ex), steps, done)->start();
    CHECK(done->wait_for(60s));
  }
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("connection: post() stores arguments by value, so locals may go away", E,
                   per_thread_executor, shared_executor) {
  REQUIRE(all_freed());
  auto done = std::make_shared<pools::wait_group>(1);
  std::string got;
  {
    E ex(2);
    auto r = std::make_shared<receiver>(pools::reactor::make_strand(ex), done);
    {
      std::string local = "answer";
      r->send(local, 42);
      local = "overwritten before the handler runs";
    }
    CHECK(done->wait_for(20s));
    ex.stop();
    got = r->got;
  }
  CHECK(got == "answer=42");
  CHECK(all_freed());
}

TEST_CASE("connection: a stored strong handler is a cycle (the counter sees it); a weak one is not") {
  REQUIRE(all_freed());
  per_thread_executor ex(1);
  SUBCASE("strong: the object keeps itself alive") {
    std::weak_ptr<hooked> observer;
    {
      auto h = std::make_shared<hooked>(ex.context(0).get_executor());
      h->store_strong();
      observer = h;
    }
    CHECK(hooked::live() == 1);  // leaked: it owns the handler that owns it
    CHECK_FALSE(observer.expired());
    observer.lock()->hook = nullptr;  // break the cycle by hand, as the fix would have
    CHECK(observer.expired());
  }
  SUBCASE("weak: dropping the last reference frees it") {
    std::function<void()> kept;
    {
      auto h = std::make_shared<hooked>(ex.context(0).get_executor());
      h->store_weak();
      kept = h->hook;  // even a copy held elsewhere does not keep it alive
    }
    CHECK(hooked::live() == 0);
  }
  CHECK(all_freed());
}

TEST_CASE_TEMPLATE("strand: handlers of one strand never overlap and all run", E, per_thread_executor,
                   shared_executor) {
  E ex(4);
  const auto strand = pools::reactor::make_strand(ex);
  const int per_thread = reactor_test::scaled(20'000);
  constexpr int posters = 4;
  long counter = 0;  // deliberately not atomic: the strand is the only protection
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0};
  pools::wait_group wg(posters * per_thread);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < posters; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < per_thread; ++i) {
          asio::post(strand, [&] {
            if (inside.exchange(true)) overlaps.fetch_add(1);
            ++counter;
            inside.store(false);
            wg.done();
          });
        }
      });
    }
  }
  wg.wait();
  CHECK(overlaps.load() == 0);
  CHECK(counter == posters * per_thread);
}

TEST_CASE_TEMPLATE("connection_registry: close_all() ends idle connections so the drain can finish", E,
                   per_thread_executor, shared_executor) {
  REQUIRE(all_freed());
  const int idle = 6;
  pools::reactor::connection_registry<echo_session> registry;
  E ex(2);
  std::vector<local_socket> peers;  // the clients say nothing: each session waits in a read
  for (int i = 0; i < idle; ++i) {
    local_socket server(pools::reactor::make_strand(ex));
    auto& client = peers.emplace_back(pools::reactor::make_strand(ex));
    asio::local::connect_pair(server, client);
    auto session = std::make_shared<echo_session>(std::move(server));
    registry.add(session);
    session->start();
  }
  CHECK(registry.size() == static_cast<std::size_t>(idle));
  CHECK(echo_session::live() == idle);

  registry.close_all();
  CHECK(reactor_test::wait_until([] { return echo_session::live() == 0; }));
  CHECK(registry.size() == 0);

  // One that arrives after the shutdown began (an accept racing with it) is closed on arrival.
  local_socket late_server(pools::reactor::make_strand(ex));
  auto& late_client = peers.emplace_back(pools::reactor::make_strand(ex));
  asio::local::connect_pair(late_server, late_client);
  auto late = std::make_shared<echo_session>(std::move(late_server));
  late->start();
  registry.add(late);
  late.reset();
  CHECK(reactor_test::wait_until([] { return echo_session::live() == 0; }));
  peers.clear();  // I/O objects go before their io_context
  ex.stop();
  CHECK(all_freed());
}
