// SPDX-License-Identifier: MIT
// pools/trace.hpp — scheduler events, recorded per thread, exported as a Perfetto timeline.
//
//   cmake --preset release -B build-trace -DPOOLS_TRACE=ON
//   build-trace/variants/coroutines/bench_coroutines --workload fib --n 20 --threads 2 --trace fib.json
//   (open fib.json in https://ui.perfetto.dev or chrome://tracing)
//
// The pools call the POOLS_TRACE_* macros below where their scheduling happens (the worker loop,
// the steal, the park, the wake), not around the user's tasks. Each thread appends fixed-size
// records to its own ring buffer: one writer, no lock, no atomic read-modify-write, so recording
// does not add the contention it is meant to show. A full ring overwrites its oldest records
// (the file then holds the last `ring_capacity` events of each thread).
//
// The switch is the CMake option POOLS_TRACE (OFF by default), which defines POOLS_TRACE=1 for
// everything linking pools::common. Without it every macro expands to ((void)0) and its
// arguments are not evaluated (POOLS_TRACE_WORKER's are, see there): the default build compiles
// the same code as before the hooks.
// pools/trace_export.hpp turns the rings into Chrome Trace Event JSON (write_chrome_json).
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace pools::trace {

/// True when this build records events (configured with -DPOOLS_TRACE=ON).
#if defined(POOLS_TRACE) && POOLS_TRACE
inline constexpr bool compiled_in = true;
#else
inline constexpr bool compiled_in = false;
#endif

/// What a command line prints (with exit 2) when --trace is asked of a build without tracing.
inline constexpr std::string_view not_compiled_message =
    "this build has no tracing: configure with -DPOOLS_TRACE=ON";

/// What happened. `id` is the task (a coroutine frame, a fiber, a queued callable's address),
/// `arg` the other worker involved (victim, woken worker) or a depth, `pool` the pool's address.
enum class event : std::uint8_t {
  task_begin,        // a worker starts running a task it took from a queue
  task_end,          // ... and is back in its scheduler loop
  post,              // a task entered a queue (from a worker of the pool, or from outside);
                     // `arg` 1: it is a parent's continuation (a work-first fork), else 0
  steal,             // this worker took `id` from worker `arg`'s queue
  park_begin,        // this worker goes to sleep (futex, condition variable, epoll_wait, hook)
  park_end,          // ... and is awake again
  wake,              // this thread wakes worker `arg` of `pool`
  fiber_suspend,     // fiber `id` gives its thread back (waits, yields)
  fiber_resume,      // fiber `id` runs again on this thread
  fiber_migrate,     // fiber `id` resumes here, having last run on worker `arg`
  coroutine_resume,  // a finishing coroutine transfers directly to `id` (no trip to the loop)
  io_completion,     // an I/O completion (a ready fd, an Asio handler) runs on this thread
  conn_accepted,     // the server accepted connection `id`
  conn_closed,       // ... and closed it
  request_begin,     // the server starts handling a request of connection `id`
  request_end,       // ... and has its response
  queue_depth,       // the pool's shared queue holds `arg` items now (a counter track)
};

/// One record: 32 bytes, the same for every event.
struct record {
  std::uint64_t ns;     // steady_clock, nanoseconds since its epoch
  std::uint64_t id;     // task or connection
  std::uint64_t pool;   // the pool's address (0: none)
  std::uint32_t arg;    // other worker, depth
  std::uint16_t track;  // the thread's track (filled in from its ring)
  event what;
  bool from_worker;  // for post: the posting thread is a worker of the same pool
};
static_assert(sizeof(record) == 32);

/// `arg` of a wake that does not know whom it wakes (a condition variable's notify_one): the
/// export shows the instant, without an arrow.
inline constexpr std::uint32_t any_worker = 0xffffffffU;

/// Records kept per thread (the last ones).
inline constexpr std::uint32_t ring_capacity = std::uint32_t{1} << 18;

/// Appends one record to the calling thread's ring (creating the ring at its first event).
void emit(event what, std::uint64_t id, std::uint64_t pool, std::uint32_t arg) noexcept;

/// Names the calling thread's track "<pool_name> worker <index>" and ties it to (pool, index),
/// so that a `wake` of that worker finds its track. Call at the start of a worker thread.
void name_worker(const void* pool, std::string_view pool_name, unsigned index) noexcept;

/// Names the calling thread's track (a thread outside any pool: "server main thread").
void name_thread(std::string_view name) noexcept;

/// From now on, the export leaves out what happened before (a bench marks its last repetition).
void mark() noexcept;

namespace detail {
constexpr void unused(const auto&... /*args*/) noexcept {}
}  // namespace detail

/// A number for an object's address, for `id` and `pool`.
inline std::uint64_t id_of(const void* p) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
}

}  // namespace pools::trace

#if defined(POOLS_TRACE) && POOLS_TRACE
#define POOLS_TRACE_EMIT_(what, id, pool, arg)                                      \
  ::pools::trace::emit(::pools::trace::event::what, static_cast<std::uint64_t>(id), \
                       ::pools::trace::id_of(pool), static_cast<std::uint32_t>(arg))
#define POOLS_TRACE_WORKER(pool, name, index) ::pools::trace::name_worker((pool), (name), (index))
#define POOLS_TRACE_THREAD(name) ::pools::trace::name_thread(name)
#define POOLS_TRACE_PARKED(pool, ...) \
  (POOLS_TRACE_PARK_BEGIN(pool), (__VA_ARGS__), POOLS_TRACE_PARK_END(pool))
#define POOLS_TRACE_TASK(id, ...) (POOLS_TRACE_TASK_BEGIN(id), (__VA_ARGS__), POOLS_TRACE_TASK_END(id))
#else
#define POOLS_TRACE_EMIT_(what, id, pool, arg) ((void)0)
// name_worker's arguments are a pool's `this`, a literal and an index: free to evaluate, and
// evaluated so that a worker loop's index parameter is not "unused" in a build without tracing.
#define POOLS_TRACE_WORKER(pool, name, index) ::pools::trace::detail::unused((pool), (name), (index))
#define POOLS_TRACE_THREAD(name) ((void)0)
#define POOLS_TRACE_PARKED(pool, ...) (__VA_ARGS__)
#define POOLS_TRACE_TASK(id, ...) (__VA_ARGS__)
#endif

// Task ids are addresses or counters; pass them as std::uint64_t-convertible values
// (POOLS_TRACE_ID(ptr) turns a pointer into one).
#define POOLS_TRACE_ID(ptr) ::pools::trace::id_of(ptr)
#define POOLS_TRACE_TASK_BEGIN(id) POOLS_TRACE_EMIT_(task_begin, id, nullptr, 0)
#define POOLS_TRACE_TASK_END(id) POOLS_TRACE_EMIT_(task_end, id, nullptr, 0)
#define POOLS_TRACE_POST(pool, id) POOLS_TRACE_EMIT_(post, id, pool, 0)
// A post whose `arg` says what was queued: 0 a task or a child, 1 a parent's continuation (a
// work-first fork: pools/coroutines/fork_scope.hpp). The export counts steals of each kind.
#define POOLS_TRACE_POST_KIND(pool, id, continuation) \
  POOLS_TRACE_EMIT_(post, id, pool, (continuation) ? 1 : 0)
#define POOLS_TRACE_STEAL(pool, id, victim) POOLS_TRACE_EMIT_(steal, id, pool, victim)
#define POOLS_TRACE_PARK_BEGIN(pool) POOLS_TRACE_EMIT_(park_begin, 0, pool, 0)
#define POOLS_TRACE_PARK_END(pool) POOLS_TRACE_EMIT_(park_end, 0, pool, 0)
// POOLS_TRACE_PARKED(pool, cv.wait(lock)): the wait expression, between a park_begin and a
// park_end (one line in a textbook loop: `while (!ready) POOLS_TRACE_PARKED(this, cv.wait(lock));`).
// POOLS_TRACE_TASK(id, run(task)): the same for running a task. Without tracing either one is
// the expression alone (of type void: its value, if any, is discarded when tracing).
#define POOLS_TRACE_WAKE(pool, index) POOLS_TRACE_EMIT_(wake, 0, pool, index)
#define POOLS_TRACE_WAKE_ANY(pool) POOLS_TRACE_EMIT_(wake, 0, pool, ::pools::trace::any_worker)
#define POOLS_TRACE_FIBER_SUSPEND(id) POOLS_TRACE_EMIT_(fiber_suspend, id, nullptr, 0)
#define POOLS_TRACE_FIBER_RESUME(id) POOLS_TRACE_EMIT_(fiber_resume, id, nullptr, 0)
#define POOLS_TRACE_FIBER_MIGRATE(id, from) POOLS_TRACE_EMIT_(fiber_migrate, id, nullptr, from)
#define POOLS_TRACE_COROUTINE_RESUME(id) POOLS_TRACE_EMIT_(coroutine_resume, id, nullptr, 0)
#define POOLS_TRACE_IO_COMPLETION(id) POOLS_TRACE_EMIT_(io_completion, id, nullptr, 0)
#define POOLS_TRACE_CONN_ACCEPTED(id) POOLS_TRACE_EMIT_(conn_accepted, id, nullptr, 0)
#define POOLS_TRACE_CONN_CLOSED(id) POOLS_TRACE_EMIT_(conn_closed, id, nullptr, 0)
#define POOLS_TRACE_REQUEST_BEGIN(id) POOLS_TRACE_EMIT_(request_begin, id, nullptr, 0)
#define POOLS_TRACE_REQUEST_END(id) POOLS_TRACE_EMIT_(request_end, id, nullptr, 0)
#define POOLS_TRACE_QUEUE_DEPTH(pool, depth) POOLS_TRACE_EMIT_(queue_depth, 0, pool, depth)
