// SPDX-License-Identifier: MIT
// instr_futures — the futures pool's hot paths for the instruction-count guard
// (bench/instructions.py; how counting stays deterministic: measure.hpp).
//   post_run    pool.post (detach_task) of an empty callable from a task, and its run (measure.hpp)
//   submit_get  submit_task of a callable returning a value, its run, and get() of its future
//               (ready by then: the blocking wait of a get() is a sleep, not a count)
#include <pools/futures/thread_pool.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <future>
#include <string>

#include "measure.hpp"

namespace {
using namespace pools::bench::instructions;
using pools::futures::thread_pool;

// submit_get: a control task submits a batch, then posts itself behind it. The pool's queue is
// FIFO and has one worker, so when the control task runs again every future of the batch is
// ready: it gets them all and submits the next batch. Counting runs from the first submission to
// the last get.
struct submissions {
  submissions(thread_pool& p, std::int64_t count) : pool(p), n(count) {}
  thread_pool& pool;
  std::int64_t n;
  std::int64_t submitted = 0;
  std::int64_t got = 0;
  std::array<std::future<std::int64_t>, batch> futures;
  std::promise<void> finished;

  void control() {
    const std::int64_t pending = submitted - got;  // the batch submitted last time
    // A get() that blocked would block the only worker for good: check first, once a batch (the
    // queue is FIFO, so the last future ready means all are).
    if (pending > 0 && futures[static_cast<std::size_t>(pending - 1)].wait_for(std::chrono::seconds(0)) !=
                           std::future_status::ready)
      wrong("the batch's last future was not ready: the queue is not FIFO");
    for (std::int64_t k = 0; k < pending; ++k) got += futures[static_cast<std::size_t>(k)].get();
    if (got == n) {
      collect_toggle();  // off
      finished.set_value();
      return;
    }
    const std::int64_t count = n - submitted < batch ? n - submitted : batch;
    for (std::int64_t k = 0; k < count; ++k) {
      futures[static_cast<std::size_t>(k)] = pool.submit_task([] { return one(); });
    }
    submitted += count;
    pool.detach_task([this] { control(); });
  }
};

void submit_and_get(std::int64_t n) {
  thread_pool pool(1);
  submissions s{pool, n};
  std::future<void> done = s.finished.get_future();
  pool.detach_task([&s] {
    collect_toggle();  // on, on the worker thread
    s.control();
  });
  done.wait();
  if (s.got != n) wrong("submit_get got " + std::to_string(s.got) + " of " + std::to_string(n));
}

}  // namespace

int main(int argc, char** argv) {
  return main_for(argc, argv,
                  {{"post_run", {[](std::int64_t n) {
                      thread_pool pool(1);
                      post_and_run(pool, n);
                    }}},
                   {"submit_get", {submit_and_get}}});
}
