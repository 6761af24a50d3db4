// SPDX-License-Identifier: MIT
// examples/offload/gateway.cpp — an API gateway's request path: a little CPU on a coroutine pool,
// one blocking library call of 5–50 ms offloaded to a futures pool, a timeout, and clients that
// go away. docs/cancellation.md walks through it and its output.
//
//   build/examples/offload/example_offload [requests]      (default 48)
//
// Each request runs as a coroutine under its client's stop token (the connection: a client that
// disconnects stops it). Its handler calls the blocking function through
// pools::coroutines::offload, inside with_timeout: the reply is 200 with the body, 504 when the
// call took longer than the timeout, 499 when the client left first, 502 when the call threw.
// While the calls block the futures pool's threads, the coroutine workers stay free: a heartbeat
// coroutine ticks on them every millisecond, and the count of its ticks shows it.
//
// The program checks what it prints (every request answered once; each status one its request
// could get; each kind seen) and exits 1 if not: it runs as a test (ctest -R example_offload).
#include <pools/coroutines/offload.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/coroutines/with_timeout.hpp>
#include <pools/futures/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace pc = pools::coroutines;
using namespace std::chrono_literals;

namespace {

constexpr auto timeout = 30ms;
constexpr auto disconnect_after = 3ms;

// What the blocking call of request `key` does (fixed, so the output can be checked).
struct plan {
  std::chrono::milliseconds duration;  // 5–50 ms
  bool fails;                          // throws at once
  bool client_leaves;                  // the client disconnects after `disconnect_after`
};
plan plan_for(int key) {
  static constexpr int durations[] = {5, 8, 12, 45, 50, 6};
  return {std::chrono::milliseconds(durations[key % 6]), key % 8 == 5, key % 7 == 3 && key % 6 >= 3};
}

std::atomic<int> in_flight{0}, most_in_flight{0}, calls_run{0};

// The blocking library call. It blocks its thread (here: sleeps), and has a cancel hook, as many
// database drivers do: it returns early when `stop` is requested. A call without one would hold
// the reply until it returned (offload waits for the call: docs/cancellation.md).
std::string legacy_lookup(int key, const std::stop_token& stop) {
  const plan p = plan_for(key);
  calls_run.fetch_add(1);
  const int now = in_flight.fetch_add(1) + 1;
  int seen = most_in_flight.load();
  while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
  }
  struct leave {
    ~leave() { in_flight.fetch_sub(1); }
  } counted;
  if (p.fails) throw std::runtime_error("backend refused key " + std::to_string(key));
  const auto end = std::chrono::steady_clock::now() + p.duration;
  while (std::chrono::steady_clock::now() < end && !stop.stop_requested()) std::this_thread::sleep_for(1ms);
  return "record " + std::to_string(key);
}

struct reply {
  int key;
  int status;
  std::string body;
  double ms;
};

// The handler: parse (a little CPU), one blocking call with a timeout, map the outcome to a status.
pc::task<reply> handle(pc::thread_pool& workers, pools::futures::thread_pool& blocking, int key) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  auto call = [](pools::futures::thread_pool& b, int k) -> pc::task<std::string> {
    co_return co_await pc::offload(b, [k](std::stop_token stop) { return legacy_lookup(k, stop); });
  };
  try {
    std::string body = co_await pc::with_timeout(workers, timeout, call(blocking, key));
    co_return reply{key, 200, body, elapsed()};
  } catch (const pc::timed_out&) {
    co_return reply{key, 504, "timed out", elapsed()};
  } catch (const pc::operation_cancelled&) {
    co_return reply{key, 499, "client closed the connection", elapsed()};
  } catch (const std::exception& e) {
    co_return reply{key, 502, e.what(), elapsed()};
  }
}

// A client: its connection is a stop source; a client that leaves stops its request.
pc::task<reply> client(pc::thread_pool& workers, pools::futures::thread_pool& blocking, int key) {
  std::stop_source connection;
  auto leave = [](pc::thread_pool& w, std::stop_source& c, bool leaves) -> pc::task<void> {
    if (!leaves) co_return;
    co_await pc::sleep_for(w, disconnect_after);
    c.request_stop();
  };
  auto [r, gone] =
      co_await pc::when_all(pc::with_stop_token(connection.get_token(), handle(workers, blocking, key)),
                            leave(workers, connection, plan_for(key).client_leaves));
  co_return r;
}

pc::task<void> heartbeat(pc::thread_pool& workers, std::atomic<bool>& stop, std::atomic<int>& ticks) {
  while (!stop.load()) {
    co_await pc::sleep_for(workers, 1ms);
    ticks.fetch_add(1);
  }
}

pc::task<std::vector<reply>> serve(pc::thread_pool& workers, pools::futures::thread_pool& blocking,
                                   int requests) {
  std::vector<pc::task<reply>> clients;
  for (int key = 0; key < requests; ++key) clients.push_back(client(workers, blocking, key));
  co_return co_await pc::when_all(std::move(clients));
}

// The statuses request `key` may get: the check below holds whatever the timing.
bool allowed(int key, int status) {
  const plan p = plan_for(key);
  if (status == 504) return true;  // any call may wait in the blocking pool's queue past the timeout
  if (status == 499) return p.client_leaves;
  if (p.fails) return status == 502;
  return status == 200 && p.duration < timeout;
}

}  // namespace

int main(int argc, char** argv) {
  int requests = 48;
  if (argc > 1) {
    char* end = nullptr;
    const long n = std::strtol(argv[1], &end, 10);
    if (*end != '\0' || n < 1 || n > 100000) {
      std::fprintf(stderr, "usage: %s [requests]: requests must be a number from 1 to 100000, not '%s'\n",
                   argv[0], argv[1]);
      return 2;
    }
    requests = static_cast<int>(n);
  }
  pc::thread_pool workers(2);               // connections and compute
  pools::futures::thread_pool blocking(8);  // threads = blocking calls in flight at once

  std::atomic<bool> stop_heartbeat{false};
  std::atomic<int> ticks{0};
  workers.spawn(heartbeat(workers, stop_heartbeat, ticks));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<reply> replies = pc::sync_wait(workers, serve(workers, blocking, requests));
  const double total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  stop_heartbeat.store(true);

  std::map<int, int> by_status;
  bool ok = static_cast<int>(replies.size()) == requests;
  for (const reply& r : replies) {
    const plan p = plan_for(r.key);
    ++by_status[r.status];
    const bool fine = allowed(r.key, r.status);
    ok = ok && fine;
    if (r.key < 12 || !fine) {
      std::printf("request %3d  call %2lld ms%s%s  ->  %d %-30s after %5.1f ms%s\n", r.key,
                  static_cast<long long>(p.duration.count()), p.fails ? ", fails" : "",
                  p.client_leaves ? ", client leaves" : "", r.status, r.body.c_str(), r.ms,
                  fine ? "" : "  UNEXPECTED");
    }
  }
  std::printf("%d requests in %.1f ms:", requests, total_ms);
  for (const auto& [status, n] : by_status) std::printf("  %d x %d", n, status);
  std::printf(
      "\nblocking calls run: %d of %d (the others were stopped while queued); at most %d at once (pool: 8)\n",
      calls_run.load(), requests, most_in_flight.load());
  std::printf(
      "heartbeat ticks on the coroutine workers meanwhile: %d (1 ms sleeps: the workers were never "
      "blocked)\n",
      ticks.load());
  for (int status : {200, 499, 502, 504}) {
    if (requests >= 48 && by_status[status] == 0) {
      std::printf("UNEXPECTED: no reply with status %d\n", status);
      ok = false;
    }
  }
  if (most_in_flight.load() > 8 || ticks.load() == 0) ok = false;
  std::printf("%s\n", ok ? "all replies as expected" : "FAILED");
  return ok ? 0 : 1;
}
