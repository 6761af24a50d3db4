// SPDX-License-Identifier: MIT
// pools/server/connection.hpp — the HTTP/1.1 protocol of one connection, without any I/O.
//
// A driver owns a socket; the connection owns everything else: the input buffer, the parser,
// routing, the order of pipelined responses, keep-alive, limits, timeouts and the lingering close.
// It never reads or writes a socket, starts a thread or blocks (except to read a static file
// chunk from disk), so one implementation serves every concurrency model. The driver is a loop:
//
//     for (;;) switch (conn.next()) {
//       case action::run:        start conn.take_job() your way; it ends in conn.complete(job)
//       case action::read:       read some bytes into conn.read_buffer(); conn.commit(n)
//                                (on EOF or any read error: conn.end_of_input())
//       case action::write:      write conn.output(); conn.consume(n)   (on error: close)
//       case action::half_close: socket.shutdown(send); continue
//       case action::wait:       a read, a write or a job of yours is in flight: return, and call
//                                next() again when it ends
//       case action::close:      close the socket; the connection is finished
//     }
//
// plus a watchdog timer: before every read and write, make sure it is armed no later than
// conn.deadline(); when it fires, call conn.expire(): true means cancel the socket's pending
// operation (the cancelled read/write lands in the loop above, which writes a 408 if one is due
// and closes); false means the deadline moved later: re-arm for the new conn.deadline(). Re-arming
// only when the deadline moved earlier keeps timers off the keep-alive fast path (see
// server/src/callback_session.cpp, watch()).
//
// Pipelining: next() may announce several jobs (one per pipelined request, up to
// limits::max_pipeline) before it says wait. Every driver starts each at once, so a connection's
// jobs run concurrently on its pool, and complete() may come in any order: the connection writes
// the responses in request order (RFC 9112 9.3.2), holding a finished job's response until those
// before it are out. That order is kept here, once, for every driver (docs/server-four-ways.md).
//
// The client leaving: while jobs run, no read is in flight, so a client that closes its socket is
// not seen until the responses are written, and its jobs would run to their end for nobody. So
// while watch_wanted() is true the driver watches the socket (a one-byte MSG_PEEK receive, which
// reads nothing: callback_session.cpp, suspending_session.cpp); on EOF or a reset it calls
// jobs_stop().request_stop(), from any thread. Every job's stop token (job::stop) then fires, the
// jobs end early, and the connection writes nothing more: next() says wait until every job taken
// is back, then close. A watch that finds bytes (a pipelined request) means the client is there;
// the driver stops watching until its next read. A client that half-closes (shutdown(SHUT_WR))
// while its job runs is taken as gone, as nginx does (its 499).
//
// Thread safety: none. Every call for one connection must be made by one thread at a time (its
// I/O thread, strand, fiber or coroutine); a job that runs elsewhere must send its completion
// back there (post it) before calling complete(). Distinct connections are independent.
#pragma once

#include <pools/server/job.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>

namespace pools::server {

class app;

/// What the driver must do next for a connection; see connection::next().
enum class action : unsigned char { read, write, run, wait, half_close, close };
std::string_view to_string(action a) noexcept;

class connection {
 public:
  using clock = std::chrono::steady_clock;

  /// Counts the connection as open in app.counters(); past --max-connections it is *refused*:
  /// it still reads one request, answers 503 with Connection: close, and closes (politely, so
  /// that the client reads the status rather than a reset). `peer` ("ip:port") is only used by
  /// the access log. `app` must outlive the connection.
  explicit connection(app& app, std::string peer = {});
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  /// The next step. Parses whatever is buffered, then, in this order: run (a job is waiting to
  /// be taken), write (response bytes are ready), wait (a read, write or job is in flight),
  /// half_close / read (lingering after the last response of a closing connection: reads are
  /// discarded), read (idle or mid-request), close (done: no response pending). Calling it while
  /// an I/O operation it asked for is in flight returns wait, so a job's completion may always
  /// call it.
  action next();

  // ---- reading ----
  /// Where to read into (never empty). Valid until the next call on this connection.
  std::span<char> read_buffer();
  /// `n` bytes were read into read_buffer(); they are parsed by the next next().
  void commit(std::size_t n);
  /// The peer closed its side (EOF), or the read failed or was cancelled. Complete requests
  /// already received are still answered; a partial one is dropped.
  void end_of_input();

  // ---- writing ----
  /// The bytes to write now: one or more whole responses in request order, or the next piece of
  /// a file body. Valid until consume().
  std::span<const char> output() const;
  /// `n` bytes of output() were written.
  void consume(std::size_t n);

  // ---- jobs ----
  /// The job next() announced with action::run. Its response waits, in order, for complete().
  job take_job();
  /// The job is done. For fib, `value` is fib(n); otherwise it is ignored.
  void complete(const job& j, std::uint64_t value = 0);
  /// The job failed (an exception in the driver's code): its response becomes a 500.
  void fail(const job& j, std::string_view what);
  /// The driver's queue was full (--queue-limit), so the job was never started: its response
  /// becomes 503 Service Unavailable with Retry-After, and the connection stays open. The same
  /// answer from every bounded driver, instead of a queue that grows without bound.
  void reject(const job& j);

  // ---- the client leaving (see the header comment) ----
  /// True while jobs are running and nothing else is in flight or closed: the driver should watch
  /// the socket for the client leaving now.
  bool watch_wanted() const noexcept;
  /// The source of every job's stop token. request_stop() on it (any thread) when the client has
  /// gone; the connection then drops its unwritten responses and closes once its jobs are back.
  /// Before the first job it is empty (stop_possible() is false) and request_stop() does nothing.
  std::stop_source jobs_stop();

  // ---- time ----
  /// When the connection times out if nothing happens: idle keep-alive, the header timeout from a
  /// request's first byte, a stalled body or write, the linger. time_point::max() while only jobs
  /// are pending (they bound themselves). Changes after commit/consume/complete: re-arm.
  clock::time_point deadline() const;
  /// The timer fired. Returns false if the deadline has moved past `now` (re-arm and wait again).
  /// Returns true if the connection timed out: a 408 is queued if a request had started, no more
  /// reads are wanted; the driver must cancel its pending read or write and call next().
  bool expire(clock::time_point now = clock::now());

  // ---- graceful shutdown ----
  /// Stop taking requests: buffered and partial requests are dropped; requests already parsed
  /// finish (jobs run, responses are written), then the connection closes. Returns true if a
  /// read is in flight that the driver must cancel (the connection was idle). Idempotent.
  bool shutdown();

  bool refused() const noexcept;
  /// Requests parsed on this connection so far.
  std::uint64_t requests() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace pools::server
