// SPDX-License-Identifier: MIT
#include <pools/server/app.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/log.hpp>
#include <pools/trace.hpp>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <vector>

#include "request_parser.hpp"
#include "response.hpp"
#include "router.hpp"

namespace pools::server {

using detail::request;
using detail::response;

std::string_view to_string(action a) noexcept {
  switch (a) {
    case action::read:
      return "read";
    case action::write:
      return "write";
    case action::run:
      return "run";
    case action::wait:
      return "wait";
    case action::half_close:
      return "half_close";
    case action::close:
      return "close";
  }
  return "?";
}

namespace {

constexpr std::size_t initial_input = 8 * 1024;
constexpr std::size_t min_read = 4 * 1024;
/// The input buffer never grows past this: Beast stops a header at its limit (~16.6 KiB) and
/// consumes bodies as they arrive, so only a pathological chunk header could need more (400).
constexpr std::size_t max_input = 64 * 1024;
/// Responses serialised ahead of the socket: past it, fill() stops until the socket drains
/// (echo bodies can be --max-body each).
constexpr std::size_t max_output_ahead = 256 * 1024;
constexpr std::string_view continue_100 = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

namespace detail {
/// One response position in the pipeline: requests are answered in the order they arrived,
/// whatever order their jobs finish in.
struct slot {
  std::uint64_t ticket = 0;
  bool ready = false;
  bool head = false;  // HEAD: headers only
  bool keep_alive = true;
  unsigned version = 11;
  job::kind kind = job::kind::respond;  // what to build on completion (when !ready)
  std::uint64_t arg = 0;
  response resp;
  // For the access log only (filled when --access-log is on).
  std::string method, target;
  std::chrono::steady_clock::time_point start{};
};
}  // namespace detail

using detail::slot;

struct connection::state {
  state(server::app& a, std::string p) : app(a), peer(std::move(p)), parser(a.opts().max_body) {}

  server::app& app;
  std::string peer;
  bool refused = false;

  // Input: bytes [in_begin, in_end) of `in` are received and not yet consumed by the parser.
  std::vector<char> in;
  std::size_t in_begin = 0, in_end = 0;
  detail::request_parser parser;

  // The pipeline: one slot per parsed request, in order; jobs not yet taken by the driver.
  std::deque<slot> slots;
  std::deque<job> jobs;
  std::uint64_t next_ticket = 0;
  std::uint64_t parsed = 0;
  std::size_t running = 0;  // jobs taken by the driver and not yet completed

  // The client leaving: every job's stop token comes from here, made at the first job (a
  // connection without jobs allocates nothing for it). Stopped by the driver, on any thread.
  std::stop_source stop{std::nostopstate};
  bool gone_seen = false;  // next() has dropped the responses: the client will read none

  // Output: out[out_pos..] is ready to write; a file body being streamed behind it.
  std::string out;
  std::size_t out_pos = 0;
  detail::file_body stream;
  std::uint64_t stream_offset = 0;

  bool reading = false;        // next() said read; commit/end_of_input not yet called
  bool writing = false;        // next() said write; consume not yet called
  bool closing = false;        // no more requests: close once the pending responses are out
  bool input_closed = false;   // no more reads (EOF, read error, timeout, shutdown)
  bool half_closed = false;    // lingering: reads are discarded until EOF or the linger deadline
  bool shutting_down = false;  // graceful shutdown: every response from now on says close
  bool dead = false;           // finished, or given up: close without writing more
  bool continue_sent = false;  // "100 Continue" written for the current request
  std::size_t lingered = 0;

  clock::time_point last_activity = clock::now();
  clock::time_point request_start = last_activity;
  clock::time_point linger_until{};
  std::minstd_rand rng{static_cast<std::minstd_rand::result_type>(
      std::hash<const void*>{}(this) ^ static_cast<std::size_t>(last_activity.time_since_epoch().count()))};

  bool output_pending() const { return out_pos < out.size() || stream.is_open(); }
  bool gone() const noexcept { return stop.stop_requested(); }
  bool request_started() const { return in_begin < in_end || parser.started(); }

  void push_slot(slot&& s) {
    if (s.resp.close) s.keep_alive = false;
    if (!s.keep_alive) closing = true;  // the last request this connection parses
    slots.push_back(std::move(s));
  }

  slot make_slot(const request& req) {
    slot s;
    s.ticket = next_ticket++;
    s.head = req.verb == detail::method::head;
    s.keep_alive = req.keep_alive && !refused;
    s.version = req.version;
    if (app.opts().access_log) {
      s.method = req.method_name;
      s.target = req.target;
      s.start = clock::now();
    }
    return s;
  }

  void dispatch(request&& req) {
    ++parsed;
    POOLS_TRACE_REQUEST_BEGIN(POOLS_TRACE_ID(this));
    app.counters().requests.fetch_add(1, std::memory_order_relaxed);
    slot s = make_slot(req);
    if (refused) {
      s.resp = detail::error_response(503, "too many connections");
      s.resp.extra_headers = "Retry-After: 1\r\n";
      s.ready = true;
    } else {
      auto routed = detail::route(app, req, rng);
      s.resp = std::move(routed.resp);
      if (routed.work) {
        s.kind = routed.work->what;
        s.arg = routed.work->arg;
        jobs.push_back(job{s.kind, s.arg, s.ticket, {}});
      } else if (app.every_request_is_a_job()) {
        jobs.push_back(job{job::kind::respond, 0, s.ticket, {}});
      } else {
        s.ready = true;
      }
    }
    push_slot(std::move(s));
  }

  /// The stream cannot be parsed any further: answer `status` and close.
  void dispatch_error(int status, std::string_view reason) {
    ++parsed;
    POOLS_TRACE_REQUEST_BEGIN(POOLS_TRACE_ID(this));
    app.counters().requests.fetch_add(1, std::memory_order_relaxed);
    request unparsed;
    unparsed.method_name = "-";
    unparsed.target = "-";
    slot s = make_slot(unparsed);
    s.resp = detail::error_response(status, reason);
    s.keep_alive = false;
    s.ready = true;
    push_slot(std::move(s));
    in_begin = in_end = 0;
    parser.reset();
  }

  void parse() {
    while (!closing && slots.size() < limits::max_pipeline && in_begin < in_end) {
      const std::size_t used = parser.feed({in.data() + in_begin, in_end - in_begin});
      in_begin += used;
      if (parser.error_status() != 0) {
        dispatch_error(parser.error_status(), parser.error_reason());
        break;
      }
      if (parser.done()) {
        dispatch(parser.take());
        continue_sent = false;
        request_start = last_activity;  // whatever follows in the buffer arrived with the last read
        continue;
      }
      // The parser needs more bytes (a "100 Continue" it may be waiting for goes out in fill()).
      if (in_end - in_begin >= max_input - min_read) dispatch_error(400, "request framing too large");
      break;
    }
    if (input_closed && !closing && !parser.done()) {
      // No more bytes will come: a partial request can never complete.
      in_begin = in_end;
      parser.reset();
    }
    if (in_begin == in_end) in_begin = in_end = 0;
  }

  /// Serialises ready responses at the head of the pipeline into `out`, and the next piece of a
  /// streamed file. Never called while a write is in flight: `out` must not move under it.
  void fill() {
    // A driver may write part of output(): drop the written bytes before appending, or a peer that
    // reads slowly would make `out` keep everything ever written on the connection.
    if (out_pos > 0) out.erase(0, out_pos), out_pos = 0;
    if (stream.is_open()) {
      if (out.size() - out_pos >= limits::file_chunk) return;
      stream_next_piece();
      return;
    }
    while (!slots.empty() && slots.front().ready && out.size() - out_pos < max_output_ahead) {
      slot& s = slots.front();
      const bool keep_alive = s.keep_alive && !shutting_down;
      const std::size_t before = out.size();
      detail::serialize_head(out, s.resp, keep_alive, s.version);
      if (!s.head) {
        if (s.resp.file.is_open()) {
          stream = std::move(s.resp.file);
          stream_offset = 0;
        } else {
          out.append(s.resp.body_view());
        }
      }
      account(s, out.size() - before + (stream.is_open() ? stream.size() : 0));
      if (!keep_alive) {
        closing = true;
        if (shutting_down) input_closed = true;  // no linger: the client was told to go
      }
      slots.pop_front();
      if (stream.is_open()) {
        stream_next_piece();
        return;
      }
    }
    // RFC 9110 10.1.1: a request that expects "100 Continue" gets it when its turn comes, that is
    // once every earlier response is in `out` (a pipelined one waits for those; they may still be
    // unwritten: the 100 follows them in the same write).
    if (slots.empty() && !continue_sent && parser.awaiting_body_with_continue()) {
      out.append(continue_100);
      continue_sent = true;
    }
  }

  void stream_next_piece() {
    const std::uint64_t left = stream.size() - stream_offset;
    if (left == 0) {
      stream = detail::file_body{};
      return;
    }
    const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(left, limits::file_chunk));
    if (out_pos == out.size()) out.clear(), out_pos = 0;
    const std::size_t at = out.size();
    out.resize(at + piece);
    const std::size_t got = stream.read_at(stream_offset, {out.data() + at, piece});
    out.resize(at + got);
    stream_offset += got;
    if (got == 0) {
      // The file shrank under us: the Content-Length already sent cannot be honoured, so the
      // only correct framing left is to close after what was written.
      log_warn("static file ended early at byte {} of {}; closing the connection", stream_offset,
               stream.size());
      stream = detail::file_body{};
      slots.clear();
      jobs.clear();
      closing = input_closed = true;
    } else if (stream_offset == stream.size()) {
      stream = detail::file_body{};
    }
  }

  void account(const slot& s, std::uint64_t bytes) {
    POOLS_TRACE_REQUEST_END(POOLS_TRACE_ID(this));  // (responses leave in request order)
    auto& c = app.counters();
    c.responses.fetch_add(1, std::memory_order_relaxed);
    if (s.resp.status >= 500)
      c.status_5xx.fetch_add(1, std::memory_order_relaxed);
    else if (s.resp.status >= 400)
      c.status_4xx.fetch_add(1, std::memory_order_relaxed);
    if (app.opts().access_log) {
      log_message(log_level::info, access_log_line(peer, s.method, s.target, s.version, s.resp.status, bytes,
                                                   clock::now() - s.start));
    }
  }

  slot* find(std::uint64_t ticket) {
    if (slots.empty() || ticket < slots.front().ticket) return nullptr;
    const std::uint64_t index = ticket - slots.front().ticket;
    if (index >= slots.size()) return nullptr;
    assert(slots[index].ticket == ticket);
    return &slots[index];
  }

  void finish_job(const job& j, std::optional<response> r) {
    app.counters().jobs_done.fetch_add(1, std::memory_order_relaxed);
    if (gone()) app.counters().jobs_cancelled.fetch_add(1, std::memory_order_relaxed);
    if (running > 0) --running;
    last_activity = clock::now();
    slot* s = find(j.ticket);
    if (s == nullptr || s->ready) return;  // dropped (file stream failure) or completed twice
    if (r) s->resp = std::move(*r);
    s->ready = true;
  }
};

connection::connection(app& a, std::string peer) : s_(std::make_unique<state>(a, std::move(peer))) {
  POOLS_TRACE_CONN_ACCEPTED(POOLS_TRACE_ID(s_.get()));
  auto& c = a.counters();
  const auto open = c.open.fetch_add(1, std::memory_order_relaxed) + 1;
  if (open > a.opts().max_connections) {
    c.open.fetch_sub(1, std::memory_order_relaxed);
    c.refused.fetch_add(1, std::memory_order_relaxed);
    s_->refused = true;
  } else {
    c.accepted.fetch_add(1, std::memory_order_relaxed);
  }
}

connection::~connection() {
  POOLS_TRACE_CONN_CLOSED(POOLS_TRACE_ID(s_.get()));
  if (!s_->refused) s_->app.counters().open.fetch_sub(1, std::memory_order_relaxed);
}

action connection::next() {
  auto& s = *s_;
  if (s.dead) return action::close;
  if (s.gone()) {
    // The client has gone (the driver's watch saw EOF or a reset): no response will be read. Jobs
    // not yet taken are never started; those running end early, on their stop token.
    if (!s.gone_seen) {
      s.gone_seen = true;
      s.jobs.clear();
      s.slots.clear();
      s.stream = detail::file_body{};
      if (!s.writing) s.out.clear(), s.out_pos = 0;
      s.closing = s.input_closed = true;
    }
    if (s.reading || s.writing || s.running > 0) return action::wait;
    s.dead = true;
    return action::close;
  }
  if (s.reading || s.writing) return action::wait;
  s.parse();
  if (!s.jobs.empty()) return action::run;
  s.fill();
  if (s.out_pos < s.out.size()) {
    s.writing = true;
    return action::write;
  }
  if (!s.slots.empty()) return action::wait;  // jobs in flight: their completion calls next()
  if (s.input_closed) {
    s.dead = true;
    return action::close;
  }
  if (s.closing && !s.half_closed) {
    s.half_closed = true;
    s.linger_until = clock::now() + limits::linger;
    s.in_begin = s.in_end = 0;
    return action::half_close;
  }
  s.reading = true;
  return action::read;
}

std::span<char> connection::read_buffer() {
  auto& s = *s_;
  if (s.in.empty()) s.in.resize(initial_input);
  if (s.half_closed) return {s.in.data(), s.in.size()};  // lingering: everything is discarded
  if (s.in_begin == s.in_end) s.in_begin = s.in_end = 0;
  if (s.in.size() - s.in_end < min_read && s.in_begin > 0) {
    std::memmove(s.in.data(), s.in.data() + s.in_begin, s.in_end - s.in_begin);
    s.in_end -= s.in_begin;
    s.in_begin = 0;
  }
  if (s.in.size() - s.in_end < min_read) s.in.resize(std::min(max_input, s.in.size() * 2));
  return {s.in.data() + s.in_end, s.in.size() - s.in_end};
}

void connection::commit(std::size_t n) {
  auto& s = *s_;
  POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(&s));  // a read completed
  s.reading = false;
  if (n == 0) return;
  s.last_activity = clock::now();
  if (s.input_closed) return;  // a read that completed as it was being cancelled
  if (s.half_closed) {
    s.lingered += n;
    if (s.lingered > limits::linger_bytes) s.input_closed = true;
    return;
  }
  if (!s.request_started()) s.request_start = s.last_activity;
  assert(s.in_end + n <= s.in.size());
  s.in_end += n;
}

void connection::end_of_input() {
  s_->reading = false;
  s_->input_closed = true;
}

std::span<const char> connection::output() const {
  return {s_->out.data() + s_->out_pos, s_->out.size() - s_->out_pos};
}

void connection::consume(std::size_t n) {
  auto& s = *s_;
  POOLS_TRACE_IO_COMPLETION(POOLS_TRACE_ID(&s));  // a write completed
  s.writing = false;
  s.out_pos = std::min(s.out.size(), s.out_pos + n);
  if (s.out_pos == s.out.size()) s.out.clear(), s.out_pos = 0;
  s.last_activity = clock::now();
}

job connection::take_job() {
  auto& s = *s_;
  assert(!s.jobs.empty());
  if (!s.stop.stop_possible()) s.stop = std::stop_source();  // may throw: nothing taken yet
  job j = s.jobs.front();
  s.jobs.pop_front();
  j.stop = s.stop.get_token();
  ++s.running;
  s.app.counters().jobs_started.fetch_add(1, std::memory_order_relaxed);
  return j;
}

void connection::complete(const job& j, std::uint64_t value) {
  if (j.what == job::kind::respond)
    s_->finish_job(j, std::nullopt);
  else
    s_->finish_job(j, detail::job_response(j.what, j.arg, value));
}

void connection::fail(const job& j, std::string_view what) {
  if (!s_->gone()) log_warn("{} job failed: {}", to_string(j.what), what);  // else: stopped, as asked
  s_->finish_job(j, detail::error_response(500, what));
}

bool connection::watch_wanted() const noexcept {
  const auto& s = *s_;
  return s.running > 0 && !s.reading && !s.writing && !s.input_closed && !s.half_closed && !s.gone();
}

std::stop_source connection::jobs_stop() {
  return s_->stop;
}

connection::clock::time_point connection::deadline() const {
  const auto& s = *s_;
  const auto& o = s.app.opts();
  if (s.dead) return clock::time_point::min();
  if (s.half_closed) return s.linger_until;
  if (s.writing || s.output_pending()) return s.last_activity + o.idle_timeout;
  if (!s.slots.empty() || s.input_closed) return clock::time_point::max();
  if (s.refused) return s.last_activity + o.header_timeout;
  if (s.request_started() && !s.parser.header_done())
    return std::min(s.request_start + o.header_timeout, s.last_activity + o.idle_timeout);
  return s.last_activity + o.idle_timeout;
}

bool connection::expire(clock::time_point now) {
  auto& s = *s_;
  if (now < deadline()) return false;
  if (s.dead) return true;
  if (s.half_closed || s.writing || s.output_pending()) {
    // The linger ran out, or the peer stopped reading our responses: nothing more can be said.
    if (!s.half_closed) s.app.counters().timeouts.fetch_add(1, std::memory_order_relaxed);
    s.dead = true;
    return true;
  }
  s.app.counters().timeouts.fetch_add(1, std::memory_order_relaxed);
  if (s.request_started() && !s.closing) {
    s.in_begin = s.in_end = 0;
    s.parser.reset();
    s.dispatch_error(408, "request not received in time");
  }
  s.closing = true;
  s.input_closed = true;
  return true;
}

bool connection::shutdown() {
  auto& s = *s_;
  if (s.shutting_down) return false;
  s.shutting_down = true;
  s.closing = true;
  s.input_closed = true;  // requests already parsed finish; nothing more is read
  s.in_begin = s.in_end = 0;
  s.parser.reset();
  return s.reading;
}

bool connection::refused() const noexcept {
  return s_->refused;
}
std::uint64_t connection::requests() const noexcept {
  return s_->parsed;
}

void connection::reject(const job& j) {
  s_->app.counters().jobs_refused.fetch_add(1, std::memory_order_relaxed);
  auto r = detail::error_response(503, "the server's queue is full");
  r.extra_headers = "Retry-After: 1\r\n";
  s_->finish_job(j, std::move(r));
}

}  // namespace pools::server
