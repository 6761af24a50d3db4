// SPDX-License-Identifier: MIT
// The reactor's user code on pools::sim (pools/reactor/simulated.hpp): the same template on the
// real executor and on the simulator; a strand's order kept, everything else free; timers in
// virtual time; seeds replay.
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/simulated.hpp>
#include <pools/reactor/strand.hpp>
#include <pools/reactor/timer.hpp>
#include <pools/sim/explore.hpp>

#include <boost/asio/post.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace pr = pools::reactor;
namespace sim = pools::sim;
using namespace std::chrono_literals;

namespace {

// What the handlers saw, in the order they ran (a mutex: on the real executor they run on two
// threads; on the simulator it is never contended).
struct journal {
  std::mutex mutex;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard lock(mutex);
    events.push_back(std::move(e));
  }
};

// User code, written once: two strands of five handlers each, three free posts, a timer that
// fires and a timer that is cancelled. Unqualified post(strand, f): boost::asio::post for the
// real reactor's strand, pools::reactor::post for the simulated one.
template <class Executor>
void session(Executor& ex, journal& j, std::atomic<bool>& cancelled_ran) {
  auto a = make_strand(ex);
  auto b = make_strand(ex);
  for (int i = 0; i < 5; ++i) {
    post(a, [&j, i] { j.add("a" + std::to_string(i)); });
    post(b, [&j, i] { j.add("b" + std::to_string(i)); });
  }
  for (int i = 0; i < 3; ++i) ex.post([&j, i] { j.add("free" + std::to_string(i)); });
  post_after(ex, 5ms, [&j] { j.add("timer"); });
  auto never = post_after(ex, 30s, [&cancelled_ran] { cancelled_ran = true; });
  CHECK(never.pending());
  CHECK(never.cancel());
  CHECK_FALSE(never.cancel());
}

// Each strand's handlers in the order posted: a0..a4, b0..b4.
bool strands_in_order(const std::vector<std::string>& events) {
  int next_a = 0;
  int next_b = 0;
  for (const auto& e : events) {
    if (e[0] == 'a' && e != "a" + std::to_string(next_a++)) return false;
    if (e[0] == 'b' && e != "b" + std::to_string(next_b++)) return false;
  }
  return next_a == 5 && next_b == 5;
}

}  // namespace

TEST_CASE("the same reactor user code runs on the real executor and on the simulator") {
  {
    pr::per_thread_executor ex(2);
    journal j;
    std::atomic<bool> cancelled_ran{false};
    session(ex, j, cancelled_ran);
    ex.stop();  // drains
    CHECK(j.events.size() == 14);
    CHECK(strands_in_order(j.events));
    CHECK_FALSE(cancelled_ran);
  }
  std::set<std::vector<std::string>> orders;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    sim::scheduler s(sim::make_strategy(seed % 2 == 0 ? "random" : "pct:3:20"), seed);
    pr::simulated ex(s);
    journal j;
    std::atomic<bool> cancelled_ran{false};
    session(ex, j, cancelled_ran);
    s.run();
    CHECK(j.events.size() == 14);
    CHECK(strands_in_order(j.events));  // a strand's order kept under every seed
    CHECK_FALSE(cancelled_ran);
    CHECK(j.events.back() == "timer");  // 5 ms of virtual time: after the 13 steps of 1 us
    orders.insert(j.events);
  }
  CHECK(orders.size() >= 10);  // everything else free: the strands and posts interleave differently
}

TEST_CASE("simulated reactor: the same seed, the same schedule and trace") {
  const auto run = [](const std::string& trace) {
    sim::scheduler s(sim::make_strategy("random"), 11);
    pr::simulated ex(s);
    journal j;
    std::atomic<bool> cancelled_ran{false};
    session(ex, j, cancelled_ran);
    s.run();
    s.write_trace(trace);
    return std::pair{s.schedule_text(), j.events};
  };
  CHECK(run("pools_sim_reactor_1.json") == run("pools_sim_reactor_2.json"));
  std::remove("pools_sim_reactor_1.json");
  std::remove("pools_sim_reactor_2.json");
}

TEST_CASE("simulated reactor: a 30 s timer takes no wall time") {
  sim::scheduler s(sim::make_strategy("random"), 1);
  pr::simulated ex(s);
  sim::virtual_clock::time_point fired{};
  post_after(ex, 30s, [&] { fired = sim::virtual_clock::now(); });
  const auto wall = std::chrono::steady_clock::now();
  s.run();
  CHECK(std::chrono::steady_clock::now() - wall < 1s);
  CHECK(fired == sim::virtual_clock::time_point{} + 30s);
}
