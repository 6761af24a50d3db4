// SPDX-License-Identifier: MIT
// server/fuzz/fuzz_connection.cpp — libFuzzer target: request bytes in -> pools::server::connection
// (the core's state machine) -> response bytes out, the bytes split at fuzzer-chosen points
// across reads.
//
// Input (FuzzedDataProvider, which takes numbers from the end): the last byte is the mode, the 8
// before it seed the schedule, the rest is what the client sends. A seed file is therefore a
// request stream followed by 9 bytes.
//   mode bit 0     every request is a job (the worker model: job::kind::respond)
//   mode bits 1-2  both set: the connection is refused (the app's --max-connections is 0)
//   mode bits 3-6  k: the stream is the bytes repeated 2^min(k,12) times, cut at max_stream
//   mode bit 7     a slow reader: every write takes only part of output() (all of it when it is
//                  one byte), so unwritten output is always pending
// The schedule (splitmix64 from the seed) decides the size of every read, how much of every write
// the "socket" takes, when jobs complete and in which order; the seed and each job's ticket decide
// whether that job succeeds, fails (connection::fail) or reports a wrong fib value.
//
// Each input is run twice through a fresh connection: by the schedule, and by a reference driver
// (reads as large as the buffer, whole writes, every job completed at once). Checked, abort on
// violation:
//  * Order and content. A one-piece parse of the stream (detail::request_parser over all of it,
//    then detail::route per request, as connection.cpp dispatches) predicts the responses: one per
//    request in request order with the predicted status, Content-Length, body and keep-alive,
//    then the parse error's response if the stream has one, then nothing (after a response that
//    closes, the connection produces nothing further). HEAD responses have no body; an interim
//    100 Continue comes at most once, only before the response of a request that asked for it.
//    Both runs must match the prediction, and their response heads must be byte-identical but
//    for the Date value (and /stats' Content-Length): the same responses whatever the split.
//  * Limits. Never more than limits::max_pipeline jobs outstanding; output() never holds more
//    than max_output_ahead plus one response; read_buffer() is never empty nor larger than
//    max_input; the heap the connection holds never exceeds max_heap, the bound its limits imply.
//  * The driver protocol (connection.hpp). wait only while a read, write or job is in flight (else
//    the connection would hang); run only with no I/O in flight; output() does not move while a
//    write is in flight; nothing is written after half_close; close is final (next() keeps saying
//    close, output() is empty) and leaves no job outstanding; job tickets increase; the run ends.
#include <pools/server/app.hpp>
#include <pools/server/connection.hpp>
#include <pools/server/options.hpp>
#include <pools/server/work.hpp>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fuzzer/FuzzedDataProvider.h>
#include <sanitizer/allocator_interface.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "request_parser.hpp"
#include "response.hpp"
#include "router.hpp"

namespace {

namespace srv = pools::server;
namespace detail = pools::server::detail;
namespace http = boost::beast::http;
using pools::fuzz::show;

// The connection's own buffer sizes (constants in connection.cpp): its input buffer never grows
// past max_input, and it serialises responses only while less than max_output_ahead is unwritten.
constexpr std::size_t max_input = 64 * 1024;
constexpr std::size_t max_output_ahead = 256 * 1024;
/// One response beyond max_output_ahead: the largest here is a 501 naming a method Beast let
/// through (its header limit, ~16.6 KiB) or a static-file piece (limits::file_chunk).
constexpr std::size_t max_output = max_output_ahead + srv::limits::file_chunk + 1024;
/// The request body limit of the fuzzed app: small, so that 413 is within the fuzzer's reach.
constexpr std::uint64_t max_body = 4096;
/// What the connection may hold on the heap: its input buffer (max_input); its output string
/// (max_output, twice for the string's growth); max_pipeline slots, each with a response the
/// server generates (at most the 4.3 KiB index page) and its bookkeeping; and copies of what it
/// was sent (request strings, echo bodies: at most twice the stream, max_stream here). About
/// 1.1 MiB; the largest seen while fuzzing is 1.03 MiB (a stream of GET / that fills the output).
/// A connection that kept what it wrote, or what it was sent, would not stay under it: a max_stream
/// stream of GET / asks for 3.8 MiB of index pages.
constexpr std::size_t max_heap = 1536 * 1024;
/// The longest stream: below the connection's max_input - 4 KiB, where it answers 400 "request
/// framing too large" (a limit of its buffer, which the one-piece prediction does not have).
constexpr std::size_t max_stream = 48 * 1024;
/// All output of one run is kept in a buffer reserved once: the largest legitimate output of a
/// max_stream stream is about 10 MiB (2,000 index pages).
constexpr std::size_t max_written = 24 << 20;
constexpr std::size_t max_steps = std::size_t{1} << 22;
constexpr std::string_view fail_what = "failed by the fuzz driver";

// ---------------------------------------------------------------------------------------------
// The apps (what connections share), created once.

struct fixture {
  std::filesystem::path dir;  // the static root's parent, removed at exit
  std::unique_ptr<srv::app> plain, every_job, refused;
};

fixture& the_fixture() {
  static fixture f;
  return f;
}

using pools::fuzz::write_file;

void make_fixture() {
  auto& f = the_fixture();
  f.dir = pools::fuzz::scratch_directory("pools_fuzz_connection");
  const auto root = f.dir / "root";
  write_file(root / "hello.txt", "Hello from a file\n");
  write_file(root / "a" / "b.html", "<p>b</p>\n");
  write_file(f.dir / "secret.txt", "outside the root\n");
  srv::options o;
  o.root = root;
  o.max_body = max_body;
  o.threads = 1;
  f.plain = std::make_unique<srv::app>(o, "fuzz");
  f.every_job = std::make_unique<srv::app>(o, "fuzz", /*every_request_is_a_job=*/true);
  o.max_connections = 0;
  f.refused = std::make_unique<srv::app>(o, "fuzz");
}

// ---------------------------------------------------------------------------------------------
// The schedule.

struct schedule {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
};

enum class outcome { ok, fail, wrong_value };

/// What happens to the job of request `ticket`: the same in both runs and in the prediction.
outcome job_outcome(std::uint64_t seed, std::uint64_t ticket) {
  schedule s{seed ^ (ticket * 0x2545f4914f6cdd1dULL)};
  switch (s.below(16)) {
    case 0:
      return outcome::fail;
    case 1:
      return outcome::wrong_value;
    default:
      return outcome::ok;
  }
}

// ---------------------------------------------------------------------------------------------
// The prediction: the responses a one-piece parse of the stream implies.

struct expected {
  int status = 0;
  bool head = false;
  bool keep_alive = true;
  bool may_continue = false;        // an interim 100 Continue may precede it
  std::optional<std::string> body;  // nothing: not predictable here (/stats, /busy's default)
  bool volatile_length = false;     // /stats: its Content-Length depends on counters
  bool parse_error = false;         // the response to a stream the parser refused
  std::size_t start = 0;            // parse_error: where the refused request starts in the stream
};

/// The statuses with which the parser refuses a stream (request_parser.hpp).
bool is_refusal(int status) {  // every status with which the parser refuses a request and closes
  return status == 400 || status == 413 || status == 414 || status == 417 || status == 431 || status == 501 ||
         status == 505;
}
// Which refusal a stream gets may depend on the split: Beast parses a request-line as soon as it
// has some bytes, but once it needed more it waits for the end of the header section before
// parsing it again, so an error in the request-line (400, 501, 505) is reported at once when the
// bytes arrive together, but later — as a bare LF further on (400), the header limit (414, 431) —
// when they arrive in pieces. And when the stream ends before that header section does, there
// may be no response at all (a partial request is dropped at the end of input; see header_ends).

std::string file_content(const detail::file_body& f) {
  std::string content(static_cast<std::size_t>(f.size()), '\0');
  const std::size_t got = f.read_at(0, {content.data(), content.size()});
  content.resize(got);
  return content;
}

expected predict_one(const srv::app& app, const detail::request& req, std::uint64_t ticket,
                     std::uint64_t seed, bool refused) {
  expected e;
  e.head = req.verb == detail::method::head;
  e.keep_alive = req.keep_alive && !refused;
  e.may_continue = req.expect_continue && req.version == 11;
  if (refused) {
    e.status = 503;
    e.body = detail::error_response(503, "too many connections").body;
    return e;
  }
  detail::request copy = req;  // route() may move the body out
  std::minstd_rand rng(1);
  auto routed = detail::route(app, copy, rng);
  if (routed.work || app.every_request_is_a_job()) {
    const outcome o = job_outcome(seed, ticket);
    if (o == outcome::fail) {
      e.status = 500;
      e.body = detail::error_response(500, fail_what).body;
      return e;
    }
    if (routed.work) {
      const auto& j = *routed.work;
      const std::uint64_t value =
          j.what == srv::job::kind::fib ? srv::fib_expected(j.arg) + (o == outcome::wrong_value ? 1 : 0) : 0;
      const auto r = detail::job_response(j.what, j.arg, value);
      e.status = r.status;
      // /busy without ?ms= draws its duration from the connection's own generator.
      if (j.what != srv::job::kind::busy) e.body = std::string(r.body_view());
      return e;
    }
  }
  const auto& r = routed.resp;
  e.status = r.status;
  if (r.file.is_open()) {
    e.body = file_content(r.file);
  } else if (r.type() == "application/json" && r.body_view().starts_with(R"({"variant":)")) {
    e.volatile_length = true;  // /stats (or an echo that looks like it: checked less, not wrongly)
  } else {
    e.body = std::string(r.body_view());
  }
  return e;
}

std::vector<expected> predict(const srv::app& app, std::string_view stream, std::uint64_t seed,
                              bool refused) {
  detail::request_parser parser(app.opts().max_body);
  std::vector<expected> out;
  std::uint64_t ticket = 0;
  std::size_t start = 0;  // of the current request, in the stream
  const std::size_t size = stream.size();
  while (!stream.empty()) {
    if (!parser.started()) start = size - stream.size();
    const std::size_t used = parser.feed(stream);
    stream.remove_prefix(used);
    if (parser.error_status() != 0) {
      expected e;
      e.start = start;
      e.status = parser.error_status();
      e.keep_alive = false;
      e.may_continue = true;  // the failing request may have asked for it before its body failed
      e.parse_error = true;
      e.body = detail::error_response(e.status, parser.error_reason()).body;
      out.push_back(std::move(e));
      break;
    }
    if (parser.done()) {
      out.push_back(predict_one(app, parser.take(), ticket++, seed, refused));
      if (!out.back().keep_alive) break;
      continue;
    }
    if (used == 0) break;  // the stream ends inside a request: it is dropped at end of input
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The drivers.

class driver {
 public:
  driver(srv::app& app, std::string_view stream, std::uint64_t seed, bool reference, bool slow_reader,
         std::string& written)
      : app_(app),
        stream_(stream),
        seed_(seed),
        sched_{seed},
        reference_(reference),
        slow_reader_(slow_reader),
        written_(written) {
    written_.clear();
    static std::vector<srv::job> held_storage, taken_storage;  // reserved once: off the heap measure
    held_storage.reserve(1 << 16);
    taken_storage.reserve(1 << 16);
    held_storage.clear();
    taken_storage.clear();
    held_ = &held_storage;
    taken_ = &taken_storage;
  }

  void run() {
    const auto heap_base = static_cast<std::ptrdiff_t>(__sanitizer_get_current_allocated_bytes());
    srv::connection conn(app_, "fuzz:1");
    auto& held = *held_;
    srv::action a = conn.next();
    bool read_pending = false, write_pending = false;
    std::span<char> in;
    std::span<const char> out;
    for (std::size_t steps = 0;; ++steps) {
      FUZZ_CHECK(steps < max_steps, "no end after {} steps (last action {})", steps, srv::to_string(a));
      FUZZ_CHECK(held.size() <= srv::limits::max_pipeline, "{} jobs outstanding, more than max_pipeline",
                 held.size());
      const auto heap = static_cast<std::ptrdiff_t>(__sanitizer_get_current_allocated_bytes()) - heap_base;
      FUZZ_CHECK(heap <= static_cast<std::ptrdiff_t>(max_heap),
                 "the connection holds {} bytes of heap (bound {}), {} bytes written so far", heap, max_heap,
                 written_.size());
      switch (a) {
        case srv::action::run: {
          FUZZ_CHECK(!read_pending && !write_pending, "run while a read or write is in flight");
          const srv::job j = conn.take_job();
          FUZZ_CHECK(taken_->empty() || j.ticket > taken_->back().ticket,
                     "job tickets out of order: {} after {}", j.ticket, taken_->back().ticket);
          taken_->push_back(j);
          if (reference_)
            finish(conn, j);
          else
            held.push_back(j);
          a = conn.next();
          continue;
        }
        case srv::action::write:
          FUZZ_CHECK(!half_closed_, "a write after half_close");
          FUZZ_CHECK(!read_pending && !write_pending, "write while a read or write is in flight");
          out = conn.output();
          FUZZ_CHECK(!out.empty(), "write with an empty output()");
          FUZZ_CHECK(out.size() <= max_output, "output() holds {} bytes (bound {})", out.size(), max_output);
          write_pending = true;
          break;
        case srv::action::read:
          FUZZ_CHECK(!read_pending && !write_pending, "read while a read or write is in flight");
          in = conn.read_buffer();
          FUZZ_CHECK(!in.empty() && in.size() <= max_input, "read_buffer() of {} bytes", in.size());
          read_pending = true;
          break;
        case srv::action::half_close:
          FUZZ_CHECK(!half_closed_, "half_close twice");
          FUZZ_CHECK(conn.output().empty(), "half_close with {} bytes unwritten", conn.output().size());
          half_closed_ = true;
          a = conn.next();
          continue;
        case srv::action::wait:
          FUZZ_CHECK(read_pending || write_pending || !held.empty(),
                     "wait with no read, write or job in flight: the connection would hang");
          break;
        case srv::action::close:
          FUZZ_CHECK(!read_pending && !write_pending, "close with I/O in flight");
          FUZZ_CHECK(held.empty(), "close with {} jobs outstanding", held.size());
          FUZZ_CHECK(conn.output().empty(), "close with {} bytes unwritten", conn.output().size());
          FUZZ_CHECK(conn.next() == srv::action::close, "next() after close said something else");
          return;
      }
      // One thing in flight completes: a job (in any order), or the read, or the write.
      if (!held.empty() && (!(read_pending || write_pending) || sched_.one_in(3))) {
        const std::size_t i = sched_.below(held.size());
        const srv::job j = held[i];
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        finish(conn, j);
        a = conn.next();
        if (read_pending || write_pending)
          FUZZ_CHECK(a == srv::action::wait, "next() said {} with I/O in flight", srv::to_string(a));
        if (write_pending) {
          const auto now = conn.output();
          FUZZ_CHECK(now.data() == out.data() && now.size() == out.size(),
                     "output() moved while a write was in flight");
        }
        continue;
      }
      if (read_pending) {
        read_pending = false;
        if (pos_ == stream_.size()) {
          conn.end_of_input();
        } else {
          const std::size_t n = std::min(read_size(in.size()), stream_.size() - pos_);
          std::memcpy(in.data(), stream_.data() + pos_, n);
          pos_ += n;
          conn.commit(n);
        }
      } else {
        write_pending = false;
        const std::size_t n = reference_         ? out.size()
                              : slow_reader_     ? std::max<std::size_t>(1, sched_.below(out.size()))
                              : sched_.one_in(2) ? out.size()
                                                 : 1 + sched_.below(out.size());
        FUZZ_CHECK(written_.size() + n <= max_written, "more than {} bytes of output", max_written);
        written_.append(out.data(), n);
        conn.consume(n);
      }
      a = conn.next();
    }
  }

 private:
  void finish(srv::connection& conn, const srv::job& j) {
    const outcome o = job_outcome(seed_, j.ticket);
    if (o == outcome::fail)
      conn.fail(j, fail_what);
    else if (j.what == srv::job::kind::fib)
      conn.complete(j, srv::fib_expected(j.arg) + (o == outcome::wrong_value ? 1 : 0));
    else
      conn.complete(j);
  }

  std::size_t read_size(std::size_t room) {
    if (reference_) return room;
    switch (sched_.below(4)) {
      case 0:
        return std::min(room, 1 + sched_.below(8));
      case 1:
        return std::min(room, 1 + sched_.below(64));
      case 2:
        return std::min(room, 1 + sched_.below(2048));
      default:
        return room;
    }
  }

  srv::app& app_;
  std::string_view stream_;
  std::size_t pos_ = 0;
  std::uint64_t seed_;
  schedule sched_;
  bool reference_;
  bool slow_reader_;
  std::string& written_;
  std::vector<srv::job>* held_;
  std::vector<srv::job>* taken_;
  bool half_closed_ = false;
};

// ---------------------------------------------------------------------------------------------
// The output against the prediction.

struct seen {
  int status = 0;
  bool keep_alive = true;
  std::string head;  // the raw status line and header section
  std::string body;
  std::optional<std::uint64_t> content_length;
};

/// The head with the values of `name` fields replaced by "-".
std::string blank_field(std::string head, std::string_view name) {
  const std::string marker = "\r\n" + std::string(name) + ": ";
  for (auto at = head.find(marker); at != std::string::npos; at = head.find(marker, at + 1)) {
    const auto value = at + marker.size();
    const auto end = head.find("\r\n", value);
    head.replace(value, end - value, "-");
  }
  return head;
}

/// Whether Beast, given the request that starts at `from` in pieces, is sure to see its header
/// section end: a CRLFCRLF it does not miss. Beast (1.74) misses one that lies within 8 bytes of
/// the version's start when it first parsed the request-line from a piece that ended there: it
/// needs 8 bytes for a version, asks for more, and resumes its search for the header's end 3 bytes
/// before that piece's end, past the CRLFCRLF.
bool header_ends(std::string_view stream, std::size_t from) {
  while (from < stream.size() && (stream[from] == '\r' || stream[from] == '\n')) ++from;  // empty lines
  std::size_t horizon = from;
  if (const auto sp1 = stream.find(' ', from); sp1 != std::string_view::npos)
    if (const auto sp2 = stream.find(' ', sp1 + 1); sp2 != std::string_view::npos) horizon = sp2 + 1 + 8;
  return horizon < stream.size() && stream.find("\r\n\r\n", horizon) != std::string_view::npos;
}

template <class T>
std::string statuses(const std::vector<T>& responses) {
  std::string out;
  for (const auto& r : responses) out += fmt::format("{}{}", out.empty() ? "" : " ", r.status);
  return out;
}

std::vector<seen> check_output(std::string_view run, std::string_view all, const std::vector<expected>& exp,
                               std::string_view stream) {
  std::vector<seen> out;
  std::size_t interim_before = 0;  // 100 Continue responses since the last final one
  while (!all.empty()) {
    const std::size_t index = out.size();
    http::response_parser<http::string_body> p;
    p.body_limit(std::numeric_limits<std::uint64_t>::max());
    p.eager(true);
    if (index < exp.size() && exp[index].head) p.skip(true);
    boost::system::error_code ec;
    const std::size_t used = p.put(boost::asio::const_buffer(all.data(), all.size()), ec);
    FUZZ_CHECK(!ec && p.is_done(), "{}: response {} is malformed or partial ({}): {}", run, index,
               ec.message(), show(all));
    const auto& msg = p.get();
    FUZZ_CHECK(msg.version() == 11, "{}: response {} is HTTP/{}", run, index, msg.version());
    const int status = static_cast<int>(msg.result_int());
    if (status == 100) {
      FUZZ_CHECK(++interim_before == 1, "{}: two 100 Continue before response {}", run, index);
      FUZZ_CHECK(index < exp.size() ? exp[index].may_continue : exp.empty() || exp.back().keep_alive,
                 "{}: a 100 Continue before response {} (of {}), whose request did not ask for one", run,
                 index, exp.size());
    } else {
      interim_before = 0;
      seen s;
      s.status = status;
      s.keep_alive = msg.keep_alive();
      s.head = std::string(all.substr(0, all.find("\r\n\r\n") + 4));
      s.body = msg.body();
      if (const auto cl = p.content_length()) s.content_length = *cl;
      out.push_back(std::move(s));
    }
    all.remove_prefix(used);
  }
  const bool refusal_may_be_missing =
      !exp.empty() && exp.back().parse_error && !header_ends(stream, exp.back().start);
  FUZZ_CHECK(out.size() == exp.size() || (refusal_may_be_missing && out.size() + 1 == exp.size()),
             "{}: {} responses (statuses {}), the one-piece parse predicts {} ({})", run, out.size(),
             statuses(out), exp.size(), statuses(exp));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& s = out[i];
    const auto& e = exp[i];
    if (e.parse_error) {
      // Its status may depend on the split (is_refusal), and so may its body, which names what the
      // parser saw first.
      FUZZ_CHECK(is_refusal(s.status), "{}: response {} has status {}, predicted {}: {}", run, i, s.status,
                 e.status, show(s.head));
      FUZZ_CHECK(!s.keep_alive, "{}: the refusal {} keeps the connection", run, i);
      const auto reason = detail::reason_phrase(s.status);
      FUZZ_CHECK(s.body.starts_with(reason) && s.content_length == s.body.size(),
                 "{}: refusal {} has body {}", run, i, show(s.body));
      continue;
    }
    FUZZ_CHECK(s.status == e.status, "{}: response {} has status {}, predicted {}: {}", run, i, s.status,
               e.status, show(s.head));
    FUZZ_CHECK(s.keep_alive == e.keep_alive, "{}: response {} keep-alive {}, predicted {}", run, i,
               s.keep_alive, e.keep_alive);
    if (e.body) {
      FUZZ_CHECK(s.content_length == e.body->size(), "{}: response {} Content-Length {}, predicted {}", run,
                 i, s.content_length.value_or(0), e.body->size());
      FUZZ_CHECK(e.head ? s.body.empty() : s.body == *e.body, "{}: response {} body {}, predicted {}", run, i,
                 show(s.body), show(*e.body));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pools::fuzz::keep_stderr_for_reports();
  make_fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  const auto mode = fdp.ConsumeIntegral<std::uint8_t>();
  const auto seed = fdp.ConsumeIntegral<std::uint64_t>();
  const std::string bytes = fdp.ConsumeRemainingBytesAsString();

  static std::string stream;
  stream.clear();
  const std::size_t repeat = std::size_t{1} << std::min(12, (mode >> 3) & 15);
  for (std::size_t i = 0; i < repeat && stream.size() < max_stream && !bytes.empty(); ++i) stream += bytes;
  if (stream.size() > max_stream) stream.resize(max_stream);

  auto& f = the_fixture();
  const bool refused = (mode & 6) == 6;
  srv::app& app = refused ? *f.refused : (mode & 1) != 0 ? *f.every_job : *f.plain;

  const auto exp = predict(app, stream, seed, refused);

  static std::string written, reference_written;
  written.reserve(max_written);
  reference_written.reserve(max_written);
  driver(app, stream, seed, /*reference=*/true, /*slow_reader=*/false, reference_written).run();
  const auto reference = check_output("reference run", reference_written, exp, stream);
  driver(app, stream, seed, /*reference=*/false, /*slow_reader=*/(mode & 0x80) != 0, written).run();
  const auto split = check_output("split run", written, exp, stream);
  for (std::size_t i = 0; i < std::min(split.size(), reference.size()); ++i) {
    std::string a = blank_field(split[i].head, "Date"), b = blank_field(reference[i].head, "Date");
    if (exp[i].parse_error) continue;  // checked against the prediction, as far as it may be
    if (exp[i].volatile_length) {
      a = blank_field(a, "Content-Length");
      b = blank_field(b, "Content-Length");
    }
    FUZZ_CHECK(a == b, "response {} differs between the split and the reference run:\n{}\n{}", i, show(a),
               show(b));
  }
  return 0;
}
