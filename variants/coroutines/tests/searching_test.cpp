// SPDX-License-Identifier: MIT
// thread_pool: the searching shortcut must not strand work (the searching hole), and a submission from
// outside the pool must not touch the pool after the work it submitted has let the owner destroy
// it.
//
// Both need one interleaving that luck rarely produces, so the tests force it through the park
// hook (pools/park_hook.hpp), the pool's one seam to the outside: a searching worker calls
// hook.poll() from its spin loop, so a hook that blocks in poll() holds that worker in the
// "searching" state for as long as the test needs; park() counts the workers that are parked;
// wake() runs on the thread that wakes a worker, so a hook that blocks in wake() holds a
// submitter inside the pool.
#include <doctest/doctest.h>

#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/park_hook.hpp>
#include <pools/wait_group.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace pc = pools::coroutines;
using namespace std::chrono_literals;

namespace {

using clock_type = std::chrono::steady_clock;

// A park hook with a script: idle workers sleep on a condition variable until wake() or their
// deadline; the first poll() after arm() runs `on_first_poll` on the polling (searching) worker;
// a wake() issued by a thread that set `block_wakes_here` waits for release_wakers() (bounded).
class scripted_hook final : public pools::park_hook {
 public:
  explicit scripted_hook(std::size_t workers) : woken_(workers, false) {}

  void park(unsigned i, clock::time_point deadline) override {
    std::unique_lock lock(mutex_);
    ++parked_;
    cv_.notify_all();
    const auto ready = [&] { return static_cast<bool>(woken_[i]); };
    if (deadline == clock::time_point::max())
      cv_.wait(lock, ready);
    else
      cv_.wait_until(lock, deadline, ready);
    woken_[i] = false;
    --parked_;
  }

  void poll(unsigned) override {
    if (armed_.exchange(false)) on_first_poll_();
  }

  void wake(unsigned i) override {
    {
      std::lock_guard lock(mutex_);
      woken_[i] = true;  // sticky: a wake before the park is not lost
    }
    cv_.notify_all();
    if (block_wakes_here) {
      std::unique_lock lock(mutex_);
      if (cv_.wait_for(lock, 1s, [&] { return wakers_released_; })) woke_after_release_ = true;
    }
  }

  /// The next poll() runs f on the polling worker.
  void arm(std::function<void()> f) {
    on_first_poll_ = std::move(f);
    armed_.store(true);
  }

  /// Waits (at most `limit`) until `n` workers are inside park().
  bool wait_parked(std::size_t n, std::chrono::seconds limit = 10s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return parked_ == n; });
  }

  void release_wakers() {
    {
      std::lock_guard lock(mutex_);
      wakers_released_ = true;
    }
    cv_.notify_all();
  }
  /// True if a blocked wake() was still inside the pool when release_wakers() was called.
  bool woke_after_release() {
    std::lock_guard lock(mutex_);
    return woke_after_release_;
  }

  static thread_local bool block_wakes_here;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<char> woken_;  // guarded by mutex_ (char: vector<bool> packs bits)
  std::size_t parked_ = 0;   // guarded by mutex_
  bool wakers_released_ = false, woke_after_release_ = false;  // guarded by mutex_
  std::atomic<bool> armed_{false};
  std::function<void()> on_first_poll_;  // written before armed_ (seq_cst store), read after it
};

thread_local bool scripted_hook::block_wakes_here = false;

// `count` tasks that wait for each other: each one counts itself in, then waits until all have
// started or the shared deadline passes. All of them start only if `count` workers run at once.
struct rendezvous {
  explicit rendezvous(int n, clock_type::time_point limit) : count(n), deadline(limit) {}
  const int count;
  const clock_type::time_point deadline;
  std::atomic<int> started{0};
  std::atomic<int> met{0};  // tasks that saw all `count` started before the deadline
  void arrive() {
    started.fetch_add(1);
    while (started.load() < count && clock_type::now() < deadline) std::this_thread::sleep_for(100us);
    if (started.load() >= count) met.fetch_add(1);
  }
};

// A coroutine that starts at once on the calling thread and frees itself when it ends.
struct eager {
  struct promise_type {
    eager get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() const noexcept { return {}; }
    std::suspend_never final_suspend() const noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

eager sleep_then_set(pc::thread_pool& pool, std::chrono::milliseconds delay, std::atomic<bool>& done) {
  co_await pc::sleep_for(pool, delay);  // from a thread outside the pool: add_timer
  done.store(true);
}

}  // namespace

TEST_CASE("thread_pool: work injected while a worker searches does not wait behind the work it finds") {
  // 4 workers: worker A searches (held in poll() by the hook), the other 3 are parked. An outside
  // thread posts three tasks that wait for each other; each post sees A searching and, by design,
  // wakes nobody. A takes the first one (a batch of 1: 1 + 3 / 4). The other two must not wait
  // until A's task ends while 3 workers sleep: the last searcher to find work wakes another
  // worker, which searches and does the same in turn.
  constexpr std::size_t workers = 4;
  scripted_hook hook(workers);
  rendezvous tasks(3, clock_type::now() + 5s);
  std::atomic<pc::thread_pool*> pool_ptr{nullptr};
  std::atomic<bool> all_parked{false};
  hook.arm([&] {  // on the first worker to search, before any other worker has been woken
    all_parked = hook.wait_parked(workers - 1);
    while (pool_ptr.load() == nullptr) std::this_thread::yield();
    std::thread outside([&] {
      for (int i = 0; i < 3; ++i) pool_ptr.load()->post([&] { tasks.arrive(); });
    });
    outside.join();
  });
  {
    pc::thread_pool pool(workers, hook);
    pool_ptr = &pool;
    while (tasks.started.load() < 3 && clock_type::now() < tasks.deadline + 1s)
      std::this_thread::sleep_for(1ms);
  }  // drains: the tasks end by their deadline in any case
  CHECK(all_parked.load());
  CHECK(tasks.started.load() == 3);
  CHECK(tasks.met.load() == 3);  // failed before the fix: 1 task ran, 2 waited for it, 3 workers slept
}

TEST_CASE("thread_pool: a timer added while a worker searches fires while that worker runs other work") {
  // As above, with a timer instead of the second task: add_timer sees A searching and wakes
  // nobody; the parked workers sleep with no deadline, and A runs a task that waits for the timer.
  constexpr std::size_t workers = 4;
  scripted_hook hook(workers);
  const auto deadline = clock_type::now() + 5s;
  std::atomic<bool> timer_fired{false};
  std::atomic<bool> fired_while_busy{false};
  std::atomic<pc::thread_pool*> pool_ptr{nullptr};
  std::atomic<bool> all_parked{false};
  hook.arm([&] {
    all_parked = hook.wait_parked(workers - 1);
    while (pool_ptr.load() == nullptr) std::this_thread::yield();
    std::thread outside([&] {
      pc::thread_pool& pool = *pool_ptr.load();
      pool.post([&] {
        while (!timer_fired.load() && clock_type::now() < deadline) std::this_thread::sleep_for(100us);
        fired_while_busy = timer_fired.load();
      });
      sleep_then_set(pool, 20ms, timer_fired);
    });
    outside.join();
  });
  {
    pc::thread_pool pool(workers, hook);
    pool_ptr = &pool;
    while (!timer_fired.load() && clock_type::now() < deadline + 1s) std::this_thread::sleep_for(1ms);
  }
  CHECK(all_parked.load());
  CHECK(timer_fired.load());
  CHECK(fired_while_busy.load());  // failed before the fix: the timer fired after the task gave up
}

TEST_CASE(
    "thread_pool: a submitter from outside does not touch the pool once its work let the owner destroy it") {
  // An outside thread posts a task; the task's completion lets main destroy the pool. The hook
  // holds the submitter inside its wake of a parked worker (the end of inject(), after the task is
  // visible) for up to 1 s. The destructor must wait for the submitter to leave: if it returned
  // while the submitter was still inside, the rest of inject() would write to a destroyed pool.
  // The pool lives in storage of its own, so that write lands in dead but mapped memory and the
  // test fails cleanly instead of corrupting the heap.
  constexpr std::size_t workers = 2;
  scripted_hook hook(workers);
  alignas(pc::thread_pool) unsigned char storage[sizeof(pc::thread_pool)];
  auto* pool = new (storage) pc::thread_pool(workers, hook);
  REQUIRE(hook.wait_parked(workers));  // so the post wakes one: through hook.wake()
  pools::wait_group ran(1);
  std::thread outside([&] {
    scripted_hook::block_wakes_here = true;
    pool->post([&] { ran.done(); });
  });
  CHECK(ran.wait_for(10s));
  pool->~thread_pool();
  hook.release_wakers();
  outside.join();
  CHECK_FALSE(hook.woke_after_release());  // failed before the fix: ~thread_pool returned first
}
