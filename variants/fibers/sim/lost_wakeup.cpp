// SPDX-License-Identifier: MIT
// lost_wakeup — a seeded concurrency bug in fiber code, measured three ways
// (docs/testing-schedules.md, "Measured: real runs against seeds").
//
// The bug: a lost wake-up in a hand-made channel built on a fiber mutex and condition variable.
// The receiver checks the queue; finding it empty, it yields once ("give the sender a chance
// before going to sleep"), then waits for a notify — without checking the queue again. A send
// during that yield pushes its value and notifies a condition variable no one waits on yet: the
// notify is lost, and the receiver sleeps with a value in the queue. On a pool the receiver would
// sleep until the next send (for ever, after the last one); here it waits at most `patience`,
// and a timeout with a value in the queue is the failure. The fix: wait with the predicate,
// `ready.wait(guard, [&] { return !queue.empty(); })`, which checks under the lock it waits with.
//
// The command line is pools/sim/measure.hpp's: no argument prints the table row (1,000 runs on a
// pools::fibers::thread_pool of 2 threads, seeds 1..1,000 of each strategy); --real N;
// --explore STRATEGY [--seeds N] (POOLS_SIM_SEED=N replays a seed).
#include <pools/fibers/condition_variable.hpp>
#include <pools/fibers/mutex.hpp>
#include <pools/fibers/simulated.hpp>
#include <pools/fibers/this_fiber.hpp>
#include <pools/fibers/thread_pool.hpp>
#include <pools/sim/measure.hpp>

#include <chrono>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>

namespace {

using namespace std::chrono_literals;
namespace pf = pools::fibers;

constexpr int values = 3;
// How long the receiver sleeps before it gives up on a notify: virtual time on the simulator; on
// the real pool it is only ever spent when the bug happened.
constexpr auto patience = 50ms;

class mailbox {
 public:
  void send(int v) {
    {
      std::lock_guard guard(lock_);
      queue_.push_back(v);
    }
    ready_.notify_one();
  }

  // The value, and whether a wake-up was lost on the way to it.
  std::pair<int, bool> receive() {
    {
      std::lock_guard guard(lock_);
      if (!queue_.empty()) return {pop(), false};
    }
    pf::this_fiber::yield();  // spin once before sleeping: a send may come in right now...
    std::unique_lock guard(lock_);
    // ...and the bug is here: no second look at the queue before waiting.
    if (ready_.wait_for(guard, patience) == std::cv_status::timeout && !queue_.empty()) return {pop(), true};
    ready_.wait(guard, [this] { return !queue_.empty(); });  // (the fix, applied late: the run ends)
    return {pop(), false};
  }

 private:
  int pop() {
    const int v = queue_.front();
    queue_.pop_front();
    return v;
  }

  pf::mutex lock_;
  pf::condition_variable ready_;
  std::deque<int> queue_;  // guarded by lock_
};

// "" when every value arrived in order with no lost wake-up; otherwise what went wrong.
template <class Pool>
std::string send_and_receive(Pool& pool) {
  mailbox box;
  auto sender = pool.spawn([&box] {
    for (int i = 1; i <= values; ++i) box.send(i);
  });
  auto receiver = pool.spawn([&box]() -> std::string {
    for (int i = 1; i <= values; ++i) {
      const auto [v, lost] = box.receive();
      if (lost)
        return "a wake-up was lost: value " + std::to_string(v) +
               " waited in the queue while the receiver slept";
      if (v != i)
        return "value " + std::to_string(v) + " arrived where " + std::to_string(i) + " was expected";
    }
    return "";
  });
  sender.join();
  return receiver.join();
}

void simulated_program(pools::sim::scheduler& engine) {
  pf::simulated pool(engine);
  if (std::string problem = pool.run([&pool] { return send_and_receive(pool); }); !problem.empty())
    throw std::runtime_error(problem);
}

}  // namespace

int main(int argc, char** argv) {
  return pools::sim::measure_main(argc, argv,
                                  {"fibers: lost_wakeup",
                                   [] {
                                     // One run on the real pool (a pool per run: each run starts cold).
                                     pf::thread_pool pool(2);
                                     return !pool.run([&pool] { return send_and_receive(pool); }).empty();
                                   },
                                   simulated_program});
}
