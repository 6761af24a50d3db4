// SPDX-License-Identifier: MIT
// pools/fibers/textbook_pool.hpp — the fibers idea in one sitting: read this first.
//
//   pools::fibers::textbook_pool pool(2);
//   auto h = pool.spawn([] { return 40; });   // a new fiber
//   int r = h.join() + 2;                     // in a fiber: suspends the fiber, not its thread
//   pool.post([] { ... });                    // pools::Executor: a fiber nobody joins
//   pools::fibers::textbook_pool::yield();    // in a fiber: let the others run first
//
// WHAT A FIBER IS. A function with its own stack. A worker thread runs it by SWITCHING to it: it
// saves its own registers and loads the fiber's, so its stack pointer now points into the fiber's
// stack. To stop (in join() or yield()) the fiber switches back to the worker loop, work(); its
// frames wait, untouched, on its stack until some worker — perhaps on ANOTHER thread — switches
// to it again. The two switches, run() and suspend(), are in src/textbook_switch.cpp, with who
// owns a fiber's stack and when it is freed. Everything else is here.
//
// ONE LOCK. One mutex_ guards everything shared: the run queue of ready fibers and each fiber's
// done and joiner. Idle workers sleep on a condition variable; each fiber made ready
// wakes one. Only work(), the worker loop, touches a fiber that has run: it puts it back in the
// queue or registers it as a joiner, always after the fiber has switched away (join() says why).
//
// RESULTS. spawn() runs the function into a std::promise (pools::promised_task), which stores
// its value or its exception; the handle's std::future reads them. join() first waits — a fiber
// by suspending, a plain thread by blocking in future::get() — then get() returns the value or
// rethrows the exception. A handle dropped without join() discards both, like a std::future
// nobody reads. Not a std::packaged_task: it runs the function INSIDE std::call_once, which keeps
// thread_local state (libstdc++'s __once_callable) across the call. A fiber that suspends in there
// may end on another thread; GCC on arm64 reads the thread pointer once per function, so
// call_once then clears the FIRST thread's copy, maybe under a call_once that thread runs for
// another fiber: a SIGSEGV (docs/reliability.md, "Platforms").
// post() starts a fiber nobody joins, of a function that hands any exception to
// pools::report_unhandled_exception (pools::reporting_task). A fiber's stack is allocated by the
// worker that first runs it, where no caller waits: out of memory there, the worker hands
// std::bad_alloc to the fiber's body instead of running it — into the promise, which join()
// rethrows, or, posted, to report_unhandled_exception — and the fiber ends.
//
// Rules of the road:
//  * Destruction drains: it returns once every fiber has ended, including ones started while it
//    waits (work() says why an empty queue is enough). Do not destroy the pool from its fibers.
//  * After join() or yield() a fiber may be on another thread. Do not keep a thread_local's
//    address, std::this_thread::get_id() or a locked std::mutex across them, and do not call them
//    in a catch block: the C++ runtime keeps the exceptions being handled per THREAD (the tuned
//    pool carries them along at every switch; this one does not).
//  * join() every handle whose fiber uses the joiner's locals, as with std::thread.
#pragma once

#include <pools/submit.hpp>  // pools::promised_task; std::future, std::promise (<future>)
#include <pools/thread_count.hpp>
#include <pools/trace.hpp>
#include <pools/unhandled_exception.hpp>
#include <pools/unique_function.hpp>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace pools::fibers {

namespace textbook_detail {

struct context;  // a fiber's stack and saved registers (src/textbook_switch.cpp)

// One fiber. Shared by the pool (while queued, running or suspended) and by its handle.
struct fiber {
  // The task, run as body(nullptr); destroyed on the fiber when it returns. Or, when the fiber
  // cannot start (no memory for its stack), body(e) on the worker: e goes to the result, or is
  // reported (promised_task, reporting_task).
  unique_function<void(std::exception_ptr)> body;
  const void* pool;                 // the pool that runs it, as an identity: join() compares it
  context* ctx = nullptr;           // made when the fiber first runs, freed when it ends
  fiber* awaiting = nullptr;        // the fiber it joins: written by join(), read by work()
  bool done = false;                // guarded by the pool's mutex: it has ended
  std::shared_ptr<fiber> joiner{};  // guarded by the pool's mutex: a fiber suspended joining it
};

bool run(fiber& f);      // on a worker: run f until it suspends (true) or ends (false)
void suspend(fiber* f);  // on f: switch back to the worker loop that runs it (nullptr: no-op)
// The fiber this thread runs, or nullptr: written by run(), read through textbook_pool::running().
inline thread_local fiber* current = nullptr;

}  // namespace textbook_detail

class textbook_pool {
 public:
  explicit textbook_pool(std::size_t threads) {
    threads = pools::thread_count(threads);  // 0: one per hardware thread, as in every pool
    for (std::size_t i = 0; i < threads; ++i)
      workers_.emplace_back([this, i](const std::stop_token& stop) { work(stop, i); });
  }
  // No destructor body: workers_ (the last member, so the first destroyed) asks each std::jthread
  // to stop and joins it; a worker leaves once stopped AND the queue is empty: destruction drains.
  // The same holds when a thread cannot start: the exception destroys workers_, which stops and
  // joins the threads that did start, and a stop token reaches exactly the thread it belongs to.

  /// What spawn() returns. Plain data: the result to read, and the fiber to wait for.
  template <class R>
  struct [[nodiscard]] handle {
    std::future<R> result;
    std::shared_ptr<textbook_detail::fiber> fiber;

    bool joinable() const noexcept { return result.valid(); }
    /// The fiber's result, or its exception rethrown (std::future_error when not joinable).
    R join() {
      textbook_detail::fiber* self = running();  // read BEFORE the switch
      if (self != nullptr && fiber != nullptr && self->pool == fiber->pool) {
        // A fiber of this pool: say what we wait for, and switch away. We do NOT look at `fiber`
        // or register ourselves as its joiner here: it could end on another thread the moment
        // after, and queue us while we are still running on this stack, and a second worker
        // would then run this fiber on this stack too. work() does it, under the lock, once our
        // registers are saved. No lock is needed to write `awaiting`: until we have switched
        // away, no other thread reads it.
        self->awaiting = fiber.get();
        textbook_detail::suspend(self);  // returns once `fiber` has ended, maybe on another thread
      }
      return result.get();  // ready by now in a fiber; on a plain thread, blocks until it is
    }
  };

  /// Starts fn() as a new fiber.
  template <class F, class R = std::invoke_result_t<std::decay_t<F>&>>
  handle<R> spawn(F&& fn) {
    auto [future, task] = promised_task(std::forward<F>(fn));  // (pools/submit.hpp)
    return {std::move(future), start(std::move(task))};
  }

  /// pools::Executor: runs fn() once as a fiber; an exception goes to report_unhandled_exception.
  template <class F>
  void post(F&& fn) {
    (void)start(pools::reporting_task(std::forward<F>(fn)));
  }

  /// In a fiber: go to the back of the run queue, behind every fiber ready now. Elsewhere: no-op.
  static void yield() { textbook_detail::suspend(running()); }

  std::size_t concurrency() const noexcept { return workers_.size(); }
  static constexpr bool context_per_task = true;  // a fiber (a stack) per task: executor_traits

 private:
  // The fiber this thread runs, or nullptr. Read it once per join()/yield(), before the switch:
  // after it, the fiber may be on another thread, whose copy of the thread_local is another one.
  // And read it through this call, never inlined: a compiler takes a thread_local's address as
  // fixed for the whole function it is used in, so a loop of yield()s inlined into a fiber's
  // function would, once the fiber has moved to another thread, read the FIRST thread's copy —
  // another fiber, which it would then suspend from the wrong stack. (GCC on x86-64 re-reads the
  // thread pointer at each access; on arm64 it reads it once: docs/reliability.md, "Platforms".)
  [[gnu::noinline]] static textbook_detail::fiber* running() noexcept { return textbook_detail::current; }

  std::shared_ptr<textbook_detail::fiber> start(unique_function<void(std::exception_ptr)> body) {
    std::shared_ptr<textbook_detail::fiber> f(new textbook_detail::fiber{std::move(body), this});
    std::lock_guard lock(mutex_);
    make_ready(f);
    return f;
  }

  // With mutex_ held. One notify per ready fiber, so no fiber waits while a worker sleeps.
  void make_ready(std::shared_ptr<textbook_detail::fiber> f) {
    POOLS_TRACE_POST(this, POOLS_TRACE_ID(f.get()));
    queue_.push_back(std::move(f));
    POOLS_TRACE_QUEUE_DEPTH(this, queue_.size());
    POOLS_TRACE_WAKE_ANY(this);  // a condition variable's notify: some sleeping worker, if any
    work_ready_.notify_one();
  }

  // The worker loop, on the worker thread's own stack. Every switch away from a fiber lands here.
  void work(const std::stop_token& stop, std::size_t index) {
    POOLS_TRACE_WORKER(this, "fibers textbook", static_cast<unsigned>(index));
    // request_stop() runs this on the stopping thread. It takes the mutex, so the notify cannot
    // fall between a worker's check of the token and its wait. (Made before our lock: it runs at
    // once, here, when the stop came first.)
    const std::stop_callback wake(stop, [this] {
      std::lock_guard lock(mutex_);
      work_ready_.notify_all();
    });
    std::unique_lock lock(mutex_);
    for (;;) {
      // Sleep until a fiber is ready or the pool stops. Leaving on an empty queue drains all: a
      // fiber suspended in join() waits, through a chain of joins, for one that is queued or
      // running, and the worker running that one comes back here and finds what it made ready.
      // (wait(lock, predicate) is this loop, spelled out so that each real sleep is recorded:
      // POOLS_TRACE_PARKED is the wait itself, traced as a park when tracing is on, pools/trace.hpp.)
      while (queue_.empty() && !stop.stop_requested()) POOLS_TRACE_PARKED(this, work_ready_.wait(lock));
      if (queue_.empty()) return;
      std::shared_ptr<textbook_detail::fiber> f = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();  // the fiber runs without the lock, so other workers can run others
      POOLS_TRACE_TASK_BEGIN(POOLS_TRACE_ID(f.get()));
      const bool suspended = textbook_detail::run(*f);
      POOLS_TRACE_TASK_END(POOLS_TRACE_ID(f.get()));
      lock.lock();
      // f has switched away (or ended): its registers are saved, another thread may take it.
      textbook_detail::fiber* child = std::exchange(f->awaiting, nullptr);
      if (!suspended) {
        f->done = true;
        if (f->joiner) make_ready(std::move(f->joiner));
      } else if (child != nullptr && !child->done) {
        child->joiner = std::move(f);  // checked and registered under one lock hold: no lost wake-up
      } else {
        make_ready(std::move(f));  // yield(), or the child ended in between
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable work_ready_;  // "queue_ not empty, or a stop was requested"
  std::deque<std::shared_ptr<textbook_detail::fiber>> queue_;
  std::vector<std::jthread> workers_;
};

}  // namespace pools::fibers
