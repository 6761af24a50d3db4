// SPDX-License-Identifier: MIT
// pools/reactor/executor.hpp — a callback reactor: Boost.Asio io_contexts run by a fixed set of
// threads, behind the pools::Executor concept.
//
//   pools::reactor::executor ex(4, pools::reactor::strategy::per_thread);
//   ex.post([] { ... });                           // a callback, run once on a reactor thread
//   asio::ip::tcp::socket s(ex.next_context());    // or put I/O objects on its io_contexts
//
// A reactor does not run your code; it runs *completion handlers*: "when X is ready, call this".
// A posted task is the degenerate case (X = now). Control flow is inverted: a function that
// waits for something does not return the result, it registers a handler and returns, and
// whatever must survive until the handler runs has to be owned by the handler (see
// pools/reactor/connection.hpp for the ownership rules, README.md for why).
//
// Strategies (pools/reactor/strategy.hpp): per_thread = N io_contexts with one thread each,
// work handed out round-robin; shared = one io_context run by N threads.
//
// post(f) hands f straight to asio::post on the chosen io_context: no wrapper, no extra
// allocation beyond Asio's own (recycled) operation. (Only a build configured with
// -DPOOLS_TRACE=ON wraps f, to record the task: see post_traced.) Exceptions are not caught per
// handler: an exception escaping *any* handler — posted task, timer, socket completion —
// unwinds out of io_context::run(), which every reactor thread calls in a loop that reports it
// to pools::report_unhandled_exception and re-enters run() (Asio supports exactly this). So the
// rule "report, never terminate" covers I/O handlers too, at zero cost on the hot path.
//
// Stopping and destruction (the pools::Executor contract, rule 3):
//   request_stop()  stops accepting work from outside and returns at once. Tasks already
//                   accepted keep running, and tasks they post are accepted (a drain must not
//                   cut a chain of callbacks in half). Safe from inside a task. Allocates
//                   nothing (the constructor reserves its markers' memory), so it cannot fail.
//   stop()          request_stop(), then waits until every io_context has run out of work and
//                   joins the threads. Idempotent; callable from several threads.
//   ~executor()     stop().
// "Work" is Asio's outstanding work: queued handlers *and pending asynchronous operations*. A
// timer due in an hour or a socket read waiting for a client keeps stop() waiting: close
// sockets and cancel timers first (pools/reactor/connection_registry.hpp, timer_handle::cancel).
// During the drain, handlers reach other io_contexts through this executor (post, next_context,
// make_strand, post_after), which then keeps their work on their own context; a *raw*
// asio::post to another io_context, from a handler that started after the stop was requested,
// may land on a per_thread context that has already finished (its handler is then destroyed
// unrun). Work aimed at a context that still has pending operations (an open connection's
// socket) is safe: those operations keep that context running.
// After request_stop(), post() or next_context() from a thread that is not running one of this
// executor's tasks throws executor_stopped. A post that *races* with request_stop() from another
// thread is undefined, as posting during destruction is for every executor in this repository.
// stop() (and so the destructor) must not be called from one of the executor's own tasks: it
// would wait for itself; stop() throws std::logic_error, the destructor cannot and terminates.
#pragma once

#include <pools/reactor/post_cursor.hpp>
#include <pools/reactor/strategy.hpp>
#include <pools/trace.hpp>

#if defined(POOLS_TRACE) && POOLS_TRACE
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/bind_executor.hpp>
#endif
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace pools::reactor {

/// Thrown by post() and next_context() after request_stop(), when the caller is not one of the
/// executor's own tasks.
class executor_stopped : public std::runtime_error {
 public:
  executor_stopped();
};

class executor {
 public:
  using context_type = boost::asio::io_context;

  /// Starts `threads` reactor threads (0: one per hardware thread) with strategy `s`.
  executor(std::size_t threads, reactor::strategy s);
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;
  /// stop(): drains, then joins. See the header comment.
  ~executor();

  /// Runs f() once on a reactor thread (pools::Executor). per_thread: on the io_context
  /// pools/reactor/post_cursor.hpp picks (round-robin, in runs that grow with the length of a
  /// burst of posts); shared: on the one io_context.
  template <class F>
  void post(F&& f);  // defined below the classes

  /// The number of reactor threads.
  std::size_t concurrency() const noexcept { return threads_count_; }
  reactor::strategy strategy() const noexcept { return strategy_; }

  /// per_thread: as many io_contexts as threads; shared: 1.
  std::size_t context_count() const noexcept { return contexts_.size(); }
  /// The i-th io_context, for I/O objects that must live on a particular one. i < context_count(),
  /// else std::out_of_range. It stays valid until the executor is destroyed.
  context_type& context(std::size_t i);

  /// The io_context the next unit of work should go to: the round-robin choice for per_thread
  /// (give each new connection its own), the one io_context for shared. After request_stop()
  /// a reactor thread gets its own io_context (so a drain never posts to a context whose thread
  /// may have finished) and any other thread gets executor_stopped.
  context_type& next_context() {
    if (stopping_.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: see post_context()
      return context_while_stopping();
    return *contexts_[next_index()];
  }

  /// True on a reactor thread of this executor while it runs a handler.
  bool running_in_this_thread() const noexcept;

  /// Stops accepting new work from outside; returns without waiting. Idempotent.
  void request_stop();
  /// request_stop(), then waits for the drain and joins the threads. Idempotent.
  void stop();
  /// True once request_stop() has been called.
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

 private:
  // Strict round-robin, one cursor per calling thread (a shared atomic counter would be a
  // cache line every caller writes, a cost raw Asio does not have): N consecutive calls of any
  // thread — N new connections — land on N different threads.
  std::size_t next_index() noexcept {
    const std::size_t n = contexts_.size();
    if (n == 1) return 0;
    thread_local std::size_t cursor = 0;
    if (++cursor >= n) cursor = 0;
    return cursor;
  }
  context_type& post_context() {
    // relaxed is enough: a task that starts after request_stop()'s quiescence marker ran on its
    // thread is ordered after the store by that marker's post; one that reads false is, by the
    // marker argument in executor.cpp, finished before the work guards are released.
    if (stopping_.load(std::memory_order_relaxed)) [[unlikely]]
      return context_while_stopping();
    if (contexts_.size() == 1) return *contexts_[0];
    thread_local post_cursor cursor;
    return *contexts_[cursor.next(contexts_.size(), cursor.now_ns())];
  }
  context_type& context_while_stopping();
  void release_work() noexcept;

#if defined(POOLS_TRACE) && POOLS_TRACE
  // A build with -DPOOLS_TRACE=ON only (pools/trace.hpp): the one place where post() wraps f. The
  // wrapper records the task around f's call on the reactor thread, and keeps f's associated
  // executor, so a handler bound to a strand still runs on it. The task's id is a number of
  // this post (Asio's operation, the heap object that will hold f, has no address before
  // asio::post has allocated it): the calling thread's own counter, tagged with a number of the
  // thread, so that posting adds no shared atomic. io_context gives no hook for its sleep, its
  // wake-ups or its queue's depth: its threads show tasks, and no parks.
  template <class Fn>
  struct traced_task {
    std::uint64_t id;
    Fn fn;
    void operator()() {
      POOLS_TRACE_TASK_BEGIN(id);
      struct end {  // also when fn throws (the exception then leaves io_context::run())
        std::uint64_t id;
        ~end() { POOLS_TRACE_TASK_END(id); }
      } guard{id};
      fn();
    }
  };

  static std::uint64_t next_trace_id() noexcept {
    static std::atomic<std::uint64_t> threads{0};
    thread_local const std::uint64_t tag = (threads.fetch_add(1, std::memory_order_relaxed) + 1) << 40;
    thread_local std::uint64_t count = 0;
    return tag | (++count & ((std::uint64_t{1} << 40) - 1));
  }

  template <class F>
  void post_traced(F&& f) {
    context_type& ctx = post_context();  // first: it may throw executor_stopped (nothing posted)
    auto target = boost::asio::get_associated_executor(f, ctx.get_executor());
    const std::uint64_t id = next_trace_id();
    POOLS_TRACE_POST(this, id);  // before the handoff: the task cannot begin before its post
    boost::asio::post(
        ctx, boost::asio::bind_executor(target, traced_task<std::decay_t<F>>{id, std::forward<F>(f)}));
  }
#endif

  using work_guard = boost::asio::executor_work_guard<context_type::executor_type>;

  const reactor::strategy strategy_;
  const std::size_t threads_count_;
  // Declared before the guards and threads, so destroyed after them: an io_context must outlive
  // every thread running it and every guard on it.
  std::vector<std::unique_ptr<context_type>> contexts_;
  std::vector<work_guard> work_;  // keep run() from returning while idle, until the drain
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::size_t> markers_left_{0};  // per_thread drain: contexts not yet quiescent
  // Memory for request_stop()'s markers, one per io_context, reserved by the constructor: posting
  // them then allocates nothing, so out of memory cannot leave a drain begun but never ended.
  struct marker_slot;
  std::unique_ptr<marker_slot[]> marker_slots_;
  std::mutex join_mutex_;  // serialises concurrent stop() calls' joins
};

/// per_thread strategy, constructible from a thread count (registered with the conformance suite).
class per_thread_executor final : public executor {
 public:
  explicit per_thread_executor(std::size_t threads) : executor(threads, strategy::per_thread) {}
};

/// shared strategy, constructible from a thread count (registered with the conformance suite).
class shared_executor final : public executor {
 public:
  explicit shared_executor(std::size_t threads) : executor(threads, strategy::shared) {}
};

// Out of the class because of the #if: a preprocessor branch inside the class body makes
// clang-format unfold the class's one-line functions.
template <class F>
inline void executor::post(F&& f) {
#if defined(POOLS_TRACE) && POOLS_TRACE
  post_traced(std::forward<F>(f));
#else
  boost::asio::post(post_context(), std::forward<F>(f));
#endif
}

}  // namespace pools::reactor
