// SPDX-License-Identifier: MIT
// pools/testing/queue_park_hook.hpp — the smallest park hook: a queue of callbacks per worker.
//
// It stands in for an event loop in the pools' tests (the server's real one is an Asio
// io_context per worker, server/include/pools/server/worker_io.hpp): post(i, f) is "an I/O
// completion for worker i", and the hook counts what the pool asked of it.
#pragma once

#include <pools/park_hook.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace pools::testing {

class queue_park_hook final : public pools::park_hook {
 public:
  explicit queue_park_hook(std::size_t workers) {
    for (std::size_t i = 0; i < workers; ++i) slots_.push_back(std::make_unique<slot>());
  }

  /// Any thread: run f on worker i, the next time it polls or parks.
  void post(unsigned i, std::function<void()> f) {
    slot& s = *slots_.at(i);
    {
      std::lock_guard lock(s.mutex);
      s.queue.push_back(std::move(f));
    }
    s.cv.notify_one();
  }

  void park(unsigned i, clock::time_point deadline) override {
    slot& s = *slots_.at(i);
    parks.fetch_add(1);
    std::unique_lock lock(s.mutex);
    note_thread(s);
    const auto ready = [&] { return s.woken || !s.queue.empty(); };
    if (deadline == clock::time_point::max())
      s.cv.wait(lock, ready);
    else
      s.cv.wait_until(lock, deadline, ready);
    s.woken = false;
    run(s, lock);
  }

  void poll(unsigned i) override {
    slot& s = *slots_.at(i);
    polls.fetch_add(1);
    std::unique_lock lock(s.mutex);
    note_thread(s);
    run(s, lock);
  }

  void wake(unsigned i) override {
    slot& s = *slots_.at(i);
    wakes.fetch_add(1);
    {
      std::lock_guard lock(s.mutex);
      s.woken = true;  // sticky: a wake before the park is not lost
    }
    s.cv.notify_one();
  }

  /// True if every park/poll of index i came from one thread, and that thread was not `other`.
  bool one_thread_per_index(std::thread::id other) const {
    for (const auto& s : slots_) {
      std::lock_guard lock(s->mutex);
      if (s->mixed || s->thread == other) return false;
    }
    return true;
  }

  std::atomic<std::size_t> parks{0}, polls{0}, wakes{0}, ran{0};

 private:
  struct slot {
    mutable std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool woken = false;
    std::thread::id thread{};
    bool mixed = false;
  };

  static void note_thread(slot& s) {
    const auto me = std::this_thread::get_id();
    if (s.thread == std::thread::id{}) s.thread = me;
    if (s.thread != me) s.mixed = true;
  }

  void run(slot& s, std::unique_lock<std::mutex>& lock) {
    auto batch = std::move(s.queue);
    s.queue.clear();
    lock.unlock();
    for (auto& f : batch) {
      f();
      ran.fetch_add(1);
    }
  }

  std::vector<std::unique_ptr<slot>> slots_;
};

/// Posts `rounds` rounds of `per_round` tasks that count themselves in `ran`, waits for each round,
/// and leaves the workers a moment between rounds to go idle: they park in the hook, and the next
/// round's posts must wake them through it.
template <class Pool>
void post_in_rounds(Pool& pool, std::atomic<int>& ran, int rounds, int per_round) {
  for (int round = 0; round < rounds; ++round) {
    pools::wait_group wg(per_round);
    for (int i = 0; i < per_round; ++i)
      pool.post([&] {
        ran.fetch_add(1);
        wg.done();
      });
    wg.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

/// post_in_rounds(pool, ran, 20, 500), then one more round once a worker has parked in `hook`
/// (10,500 tasks in all). Idle workers spin a while before they park; on a loaded machine the
/// 1 ms between rounds can pass inside that spin, so the wait for a park is explicit (bounded at
/// 5 s) and the last round must then wake a parked worker through the hook.
template <class Pool>
void post_in_rounds_until_parked(Pool& pool, queue_park_hook& hook, std::atomic<int>& ran) {
  post_in_rounds(pool, ran, 20, 500);
  for (int i = 0; i < 500 && hook.parks.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  post_in_rounds(pool, ran, 1, 500);
}

/// From a completion the hook runs on worker 0, posts one task to `pool` and keeps worker 0 inside
/// that completion until the task has run (or 5 s passed), so only another worker can run it.
/// True if the task ran, on another thread. New work started from an I/O completion (a listener
/// spawning a connection) must not wait for the completion that started it to end.
template <class Pool>
bool posted_from_completion_ran_elsewhere(Pool& pool, queue_park_hook& hook) {
  // Owned by both lambdas, not on this stack: the task's done() lets this function return while
  // worker 0 is still inside wait_for() on the same wait_group, and a task that never ran in time
  // may still run during the pool's drain.
  struct state {
    std::atomic<bool> ran_elsewhere{false};
    pools::wait_group ran{1};
  };
  auto s = std::make_shared<state>();
  hook.post(0, [&pool, s] {
    const auto me = std::this_thread::get_id();
    pool.post([s, me] {
      s->ran_elsewhere.store(std::this_thread::get_id() != me);
      s->ran.done();
    });
    (void)s->ran.wait_for(std::chrono::seconds(5));  // worker 0 is busy until the task ran
  });
  return s->ran.wait_for(std::chrono::seconds(10)) && s->ran_elsewhere.load();
}

}  // namespace pools::testing
