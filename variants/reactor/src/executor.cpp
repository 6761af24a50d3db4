// SPDX-License-Identifier: MIT
#include <pools/reactor/executor.hpp>
#include <pools/thread_count.hpp>
#include <pools/thread_name.hpp>
#include <pools/trace.hpp>
#include <pools/unhandled_exception.hpp>

#include <cstddef>
#include <new>
#include <string>

namespace pools::reactor {

executor_stopped::executor_stopped()
    : std::runtime_error("pools::reactor::executor: stopped, no longer accepting work from outside") {}

// Room for one marker's operation: Asio's executor_op around the marker lambda (a few pointers).
constexpr std::size_t marker_slot_size = 128;
struct executor::marker_slot {
  alignas(std::max_align_t) std::byte bytes[marker_slot_size];
};

namespace {

// The allocator request_stop() hands Asio with each marker: Asio builds the marker's operation in
// the marker's slot instead of on the heap, and frees nothing (the slot goes with the executor).
// A slot is used once: request_stop() posts its markers once.
template <class T>
struct slot_allocator {
  using value_type = T;
  void* slot;

  explicit slot_allocator(void* s) noexcept : slot(s) {}
  template <class U>
  slot_allocator(const slot_allocator<U>& other) noexcept : slot(other.slot) {}  // implicit: Asio rebinds it
  T* allocate(std::size_t n) {
    static_assert(sizeof(T) <= marker_slot_size, "a marker's operation no longer fits its slot");
    static_assert(alignof(T) <= alignof(std::max_align_t), "a marker's operation needs more alignment");
    if (n != 1) throw std::bad_alloc();
    return static_cast<T*>(slot);
  }
  void deallocate(T* /*p*/, std::size_t /*n*/) noexcept {}
  template <class U>
  bool operator==(const slot_allocator<U>& other) const noexcept {
    return slot == other.slot;
  }
};

// An exception escaping a handler unwinds out of run(). Asio leaves the io_context consistent
// (its scheduler's cleanup guards return the work count and the thread's private queue), and
// documents that the thread may call run() again without restart(). So: report, re-enter.
// run() returns normally only once the io_context has run out of work for good.
// Tracing (pools/trace.hpp): run() sleeps, wakes and queues inside Asio, where no hook reaches;
// a reactor thread's track shows its tasks (executor::post) and I/O completions, not its parks.
void run_reporting(boost::asio::io_context& ctx) noexcept {
  for (;;) {
    try {
      ctx.run();
      return;
    } catch (...) {
      pools::report_unhandled_exception(std::current_exception());
    }
  }
}

}  // namespace

// threads == 0: one reactor thread per hardware thread (pools/thread_count.hpp), as in every pool.
executor::executor(std::size_t threads, reactor::strategy s)
    : strategy_(s), threads_count_(pools::thread_count(threads)) {
  threads = threads_count_;
  // The concurrency hint is a promise to Asio. 1 (per_thread) lets its scheduler skip waking
  // other threads and keep posts made on the context's own thread in a lock-free private queue.
  const std::size_t contexts = s == strategy::per_thread ? threads : 1;
  const int hint = s == strategy::per_thread ? 1 : static_cast<int>(threads);
  contexts_.reserve(contexts);
  work_.reserve(contexts);
  marker_slots_ = std::make_unique<marker_slot[]>(contexts);
  for (std::size_t i = 0; i < contexts; ++i) {
    contexts_.push_back(std::make_unique<context_type>(hint));
    work_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
  threads_.reserve(threads);
  try {
    for (std::size_t i = 0; i < threads; ++i) {
      context_type& ctx = *contexts_[i % contexts];
#if defined(POOLS_TRACE) && POOLS_TRACE
      threads_.emplace_back([this, &ctx, i] {
        POOLS_TRACE_WORKER(this, "reactor", static_cast<unsigned>(i));  // track "reactor worker i"
        run_reporting(ctx);
      });
#else
      threads_.emplace_back([&ctx] { run_reporting(ctx); });
#endif
      pools::name_thread(threads_.back(), "reactor-" + std::to_string(i));
    }
  } catch (...) {
    // A thread failed to start (std::system_error). Nothing has been posted yet, so there is
    // nothing to drain and no cross-context post to wait for — and request_stop()'s markers would
    // wait forever on a context that has no thread. Release the guards, join the threads that did
    // start, and report it.
    release_work();
    for (auto& t : threads_) t.join();
    throw;
  }
}

executor::~executor() {
  stop();
}

executor::context_type& executor::context(std::size_t i) {
  if (i >= contexts_.size()) {
    throw std::out_of_range("pools::reactor::executor::context(" + std::to_string(i) + "): there are " +
                            std::to_string(contexts_.size()) + " io_contexts");
  }
  return *contexts_[i];
}

bool executor::running_in_this_thread() const noexcept {
  for (const auto& ctx : contexts_) {
    if (ctx->get_executor().running_in_this_thread()) return true;
  }
  return false;
}

executor::context_type& executor::context_while_stopping() {
  // During the drain a reactor thread keeps its work on its own io_context, which cannot run
  // out of work while this very handler is still running on it.
  for (const auto& ctx : contexts_) {
    if (ctx->get_executor().running_in_this_thread()) return *ctx;
  }
  throw executor_stopped();
}

// Releasing the guards lets each io_context's run() return once its own work count is zero.
// With one io_context that is the whole drain: a handler's posts count as work before the
// handler finishes, so the count cannot touch zero while anything is left.
//
// With per_thread there are N counts, and a handler on context A may post to context B. Had B's
// guard already gone and B run dry, B's thread would have left run() and the post would be
// lost. So the guards go only after each context has *quiesced*: a marker posted to every
// context after `stopping_` was set. A context runs on one thread, so when its marker runs,
// every handler that ran before it on that thread — the only ones that can have read
// stopping_ == false and posted elsewhere — has finished, and its posts are counted on their
// target contexts; every handler after the marker reads true and posts only to its own context.
// When the last marker has run, no cross-context post can ever happen again: release.
void executor::request_stop() {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
  if (contexts_.size() == 1) {
    release_work();
    return;
  }
  markers_left_.store(contexts_.size(), std::memory_order_relaxed);  // published by the posts
  for (std::size_t i = 0; i < contexts_.size(); ++i) {
    // Built in the i-th slot (slot_allocator): this post cannot fail for lack of memory, so every
    // context gets its marker, and the drain that stopping_ began always ends.
    const auto never_blocking =
        boost::asio::require(contexts_[i]->get_executor(), boost::asio::execution::blocking.never,
                             boost::asio::execution::allocator(slot_allocator<void>(&marker_slots_[i])));
    never_blocking.execute([this] {
      // acq_rel: the last marker must see every other marker's context as quiesced.
      if (markers_left_.fetch_sub(1, std::memory_order_acq_rel) == 1) release_work();
    });
  }
}

void executor::release_work() noexcept {
  // Called exactly once (the first request_stop() or the last marker); nothing else touches
  // work_ until the destructor, which runs after the threads are joined.
  for (auto& guard : work_) guard.reset();
}

void executor::stop() {
  if (running_in_this_thread()) {
    throw std::logic_error(
        "pools::reactor::executor::stop() called from one of its own tasks would wait for itself; "
        "call request_stop() instead");
  }
  request_stop();
  std::lock_guard lock(join_mutex_);
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace pools::reactor
