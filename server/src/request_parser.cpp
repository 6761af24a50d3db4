// SPDX-License-Identifier: MIT
// The only translation unit of the core that includes Boost.Beast (see request_parser.hpp).
#include "request_parser.hpp"

#include <pools/server/options.hpp>

#include <arpa/inet.h>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace pools::server::detail {

namespace http = boost::beast::http;
using boost::beast::iequals;
using boost::beast::string_view;
using error_code = boost::system::error_code;

namespace {

/// Beast's start line and header section each get this much; the exact limits (414 / 431) are
/// checked below, where they can be told apart.
constexpr std::uint32_t beast_header_limit = limits::max_target + limits::max_header_fields + 256;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
/// RFC 3986 2.3 unreserved, 2.2 sub-delims.
bool is_unreserved_or_sub_delim(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
         string_view("-._~!$&'()*+,;=").find(c) != string_view::npos;
}

/// RFC 3986 3.2.2: IP-literal = "[" ( IPv6address / IPvFuture ) "]", given without the brackets.
bool valid_ip_literal(string_view s) {
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V')) {
    // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
    const auto dot = s.find('.');
    if (dot == string_view::npos || dot < 2 || dot + 1 == s.size()) return false;
    return std::all_of(s.begin() + 1, s.begin() + static_cast<std::ptrdiff_t>(dot), is_hex) &&
           std::all_of(s.begin() + static_cast<std::ptrdiff_t>(dot) + 1, s.end(),
                       [](char c) { return c == ':' || is_unreserved_or_sub_delim(c); });
  }
  char text[INET6_ADDRSTRLEN];
  if (s.size() >= sizeof text) return false;
  std::copy(s.begin(), s.end(), text);
  text[s.size()] = '\0';
  in6_addr address{};
  return ::inet_pton(AF_INET6, text, &address) == 1;
}

/// RFC 9110 7.2: Host = uri-host [ ":" port ], with RFC 3986 3.2.2 host = IP-literal /
/// IPv4address / reg-name (every IPv4address is a reg-name too, and a reg-name may be empty) and
/// 3.2.3 port = *DIGIT.
bool valid_host(string_view v) {
  string_view port;
  if (!v.empty() && v.front() == '[') {
    const auto close = v.find(']');
    if (close == string_view::npos || !valid_ip_literal(v.substr(1, close - 1))) return false;
    const auto rest = v.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return false;
    port = rest.empty() ? rest : rest.substr(1);
  } else {
    const auto colon = v.find(':');
    const auto name = v.substr(0, colon);
    port = colon == string_view::npos ? string_view() : v.substr(colon + 1);
    for (std::size_t i = 0; i < name.size(); ++i) {  // reg-name = *( unreserved / pct-encoded / sub-delims )
      if (name[i] == '%') {
        if (i + 2 >= name.size() || !is_hex(name[i + 1]) || !is_hex(name[i + 2])) return false;
        i += 2;
      } else if (!is_unreserved_or_sub_delim(name[i])) {
        return false;
      }
    }
  }
  return std::all_of(port.begin(), port.end(), is_digit);
}

/// `e` without the optional whitespace (SP, HTAB) around it (RFC 9110 5.6.3).
string_view trim_ows(string_view e) {
  while (!e.empty() && (e.front() == ' ' || e.front() == '\t')) e.remove_prefix(1);
  while (!e.empty() && (e.back() == ' ' || e.back() == '\t')) e.remove_suffix(1);
  return e;
}

/// The status for a request's Transfer-Encoding list (all its field lines, in order): 0 when it is
/// exactly "chunked"; 400 when chunked is not the final coding, or is applied twice (RFC 9112 6.3,
/// 6.1: the length cannot be determined); 501 when chunked is final but another coding, which the
/// server does not implement, comes before it (6.1).
int transfer_coding_status(string_view list) {
  bool last_is_chunked = false;
  int chunked = 0, others = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto element = trim_ows(list.substr(0, comma));
    list = comma == string_view::npos ? string_view() : list.substr(comma + 1);
    if (element.empty()) continue;  // RFC 9110 5.6.1: empty list elements do not count
    last_is_chunked = iequals(element, "chunked");
    ++(last_is_chunked ? chunked : others);
  }
  if (!last_is_chunked || chunked > 1) return 400;
  return others > 0 ? 501 : 0;
}

/// Whether the Expect list (all its field lines) asks for anything but 100-continue, the only
/// expectation defined (RFC 9110 10.1.1); empty elements do not count (5.6.1).
bool has_unknown_expectation(string_view list) {
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto element = trim_ows(list.substr(0, comma));
    list = comma == string_view::npos ? string_view() : list.substr(comma + 1);
    if (!element.empty() && !iequals(element, "100-continue")) return true;
  }
  return false;
}

/// Whether `bytes` holds an LF that is not the end of a CRLF.
bool has_bare_lf(std::string_view bytes) {
  for (auto at = bytes.find('\n'); at != std::string_view::npos; at = bytes.find('\n', at + 1))
    if (at == 0 || bytes[at - 1] != '\r') return true;
  return false;
}

/// What to make of a request-line Beast refused with bad_version (it accepts HTTP/1.0 and 1.1
/// only). request-line = method SP request-target SP HTTP-version CRLF, with HTTP-version =
/// "HTTP/" DIGIT "." DIGIT (RFC 9112 3, 2.3).
enum class version_verdict {
  incomplete,   ///< the line has not ended yet
  later_minor,  ///< HTTP/1.2 .. 1.9: to be served as HTTP/1.1 (RFC 9110 2.5)
  other_major,  ///< HTTP/0.x, 2.x .. 9.x: 505 (RFC 9110 15.6.6)
  malformed,    ///< 400
};
struct version_check {
  version_verdict verdict = version_verdict::malformed;
  std::size_t minor_at = 0;  ///< later_minor: where the minor digit is
};
version_check check_version(std::string_view bytes) {
  const auto lf = bytes.find('\n');
  if (lf == std::string_view::npos) return {version_verdict::incomplete};
  if (lf == 0 || bytes[lf - 1] != '\r') return {version_verdict::malformed};
  const auto line = bytes.substr(0, lf - 1);
  const auto first = line.find(' ');
  const auto last = line.rfind(' ');
  // Exactly two SPs, a method and a target around the first.
  if (first == std::string_view::npos || first == 0 || last != line.find(' ', first + 1) || last == first + 1)
    return {version_verdict::malformed};
  const auto v = line.substr(last + 1);
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || !is_digit(v[5]) || v[6] != '.' || !is_digit(v[7]))
    return {version_verdict::malformed};
  if (v[5] != '1') return {version_verdict::other_major};
  if (v[7] >= '2') return {version_verdict::later_minor, last + 1 + 7};
  return {version_verdict::malformed};  // 1.0 or 1.1: Beast refused something else on the line
}

/// Beast's parser with our callbacks: it builds a pools::server::detail::request directly,
/// without a fields container (no allocation per header field).
class beast_request_parser final : public http::basic_parser<true> {
 public:
  beast_request_parser(request& req, std::uint64_t max_body) : req_(req) {
    header_limit(beast_header_limit);
    body_limit(max_body);
    // Eager: keep going into the body in the same put(), but put() still stops at the end of
    // a message, so pipelined requests after it stay in the caller's buffer.
    eager(true);
  }

  bool got_request_line() const noexcept { return got_request_line_; }
  /// Beast is waiting for the end of a line: in the header section, or in a chunked body, for a
  /// chunk-size line, the CRLF after chunk data, or the trailer section.
  bool awaiting_line() const noexcept { return !is_header_done() || (chunked() && chunk_left_ == 0); }
  int status() const noexcept { return status_; }
  const char* reason() const noexcept { return reason_; }

 private:
  void reject(error_code& ec, int status, const char* reason) {
    status_ = status;
    reason_ = reason;
    ec = http::error::bad_value;  // any error: it stops the parser; status_ says which
  }

  void on_request_impl(http::verb verb, string_view method, string_view target, int version,
                       error_code& ec) override {
    got_request_line_ = true;
    if (target.size() > limits::max_target) return reject(ec, 414, "request-target too long");
    switch (verb) {
      case http::verb::get:
        req_.verb = method::get;
        break;
      case http::verb::head:
        req_.verb = method::head;
        break;
      case http::verb::post:
        req_.verb = method::post;
        break;
      default:
        req_.verb = method::other;
        break;
    }
    req_.method_name.assign(method.data(), method.size());
    req_.target.assign(target.data(), target.size());
    req_.version = version == 10 ? 10 : 11;
  }

  void on_response_impl(int, string_view, int, error_code& ec) override { ec = http::error::bad_method; }

  void on_field_impl(http::field field, string_view name, string_view value, error_code& ec) override {
    header_bytes_ += name.size() + value.size() + 4;  // "name: value\r\n"
    if (header_bytes_ > limits::max_header_fields) return reject(ec, 431, "header section too large");
    // A trailer field (after a chunked body) is never merged into the header section (RFC 9110
    // 6.5.1): a trailer Content-Type is not the request's, a trailer Host is not a second Host.
    if (is_header_done()) return;
    switch (field) {
      case http::field::host:
        if (has_host_) return reject(ec, 400, "more than one Host");
        if (!valid_host(value)) return reject(ec, 400, "invalid Host");
        has_host_ = true;
        break;
      case http::field::transfer_encoding:
        // One list over all its field lines (RFC 9110 5.3); checked once the header is complete.
        if (has_transfer_encoding_) transfer_encoding_ += ',';
        transfer_encoding_.append(value.data(), value.size());
        has_transfer_encoding_ = true;
        break;
      case http::field::content_type:
        req_.content_type.assign(value.data(), value.size());
        break;
      case http::field::expect:
        // One list over all its field lines, like Transfer-Encoding; judged once the header is
        // complete.
        if (!expect_.empty()) expect_ += ',';
        expect_.append(value.data(), value.size());
        req_.expect_continue = req_.expect_continue || iequals(value, "100-continue");
        break;
      default:
        break;
    }
  }

  void on_header_impl(error_code& ec) override {
    if (req_.version == 11 && !has_host_) return reject(ec, 400, "HTTP/1.1 request without Host");
    // RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing (an HTTP/1.0
    // recipient would read the body by Content-Length or to the close), even with a Content-Length.
    if (has_transfer_encoding_ && req_.version == 10)
      return reject(ec, 400, "Transfer-Encoding in an HTTP/1.0 request");
    // Beast frames a body only by a final "chunked", and would drop any coding before it; any other
    // Transfer-Encoding would leave the body to be parsed as the next request.
    if (has_transfer_encoding_) {
      const int status = transfer_coding_status(transfer_encoding_);
      if (status == 501) return reject(ec, 501, "a transfer coding other than chunked");
      if (status != 0 || !chunked()) return reject(ec, 400, "chunked is not the final transfer coding");
    }
    // RFC 9110 10.1.1: an expectation other than 100-continue cannot be met: 417 (a MAY; Apache
    // httpd answers 417, nginx ignores the field). The body, if any, is not read: the connection
    // closes. An HTTP/1.0 request's expectations are ignored, as 10.1.1 requires for 100-continue.
    if (req_.version == 11 && has_unknown_expectation(expect_))
      return reject(ec, 417, "an expectation other than 100-continue");
    req_.keep_alive = keep_alive();
  }

  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    if (length) req_.body.reserve(static_cast<std::size_t>(*length));  // <= max_body: checked by Beast
  }

  std::size_t on_body_impl(string_view body, error_code&) override {
    req_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t size, string_view, error_code&) override { chunk_left_ = size; }

  std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code&) override {
    req_.body.append(body.data(), body.size());
    chunk_left_ = remain - body.size();
    return body.size();
  }

  void on_finish_impl(error_code&) override {}

  request& req_;
  std::size_t header_bytes_ = 0;
  bool got_request_line_ = false;
  bool has_host_ = false;
  bool has_transfer_encoding_ = false;
  std::string transfer_encoding_;
  std::string expect_;
  std::uint64_t chunk_left_ = 0;  // bytes of the current chunk's data not yet seen
  int status_ = 0;
  const char* reason_ = "";
};

}  // namespace

struct request_parser::impl {
  std::uint64_t max_body = 0;
  request req;
  std::optional<beast_request_parser> parser;  // a Beast parser parses one message: one per request
  int status = 0;
  std::string reason;

  void fail(int s, std::string r) {
    status = s;
    reason = std::move(r);
  }
};

request_parser::request_parser(std::uint64_t max_body) : impl_(std::make_unique<impl>()) {
  impl_->max_body = max_body;
}
request_parser::~request_parser() = default;

std::size_t request_parser::feed(std::string_view bytes) {
  auto& s = *impl_;
  if (s.status != 0) return 0;
  std::size_t skipped = 0;
  if (!s.parser) {
    // RFC 9112 2.2: a server SHOULD ignore at least one empty line before a request-line
    // (some clients send CRLF after a POST body).
    while (skipped < bytes.size() && (bytes[skipped] == '\r' || bytes[skipped] == '\n')) ++skipped;
    bytes.remove_prefix(skipped);
    if (bytes.empty()) return skipped;
    s.parser.emplace(s.req, s.max_body);
  }
  error_code ec;
  std::size_t used = s.parser->put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
  if (ec == http::error::bad_version && !s.parser->got_request_line()) {
    const auto version = check_version(bytes);
    switch (version.verdict) {
      case version_verdict::incomplete:
        // Beast judged the version before the line's end: judge again once it is here. A line
        // that has not ended within Beast's header limit is too long (414), as Beast finds when
        // the same bytes arrive in pieces (it then waits for the header's end, up to the limit).
        if (bytes.size() >= beast_header_limit) {
          s.fail(414, "request-target too long");
          return skipped;
        }
        s.parser.reset();
        return skipped;
      case version_verdict::later_minor: {
        // RFC 9110 2.5: a higher minor version is served as the highest one the server implements,
        // HTTP/1.1. Beast accepts 1.0 and 1.1 only, so it parses a copy that says 1.1; it consumes
        // the same bytes as it would of the original (the request-line at least, which is all
        // that differs), and keeps nothing of the copy.
        std::string as_1_1(bytes);
        as_1_1[version.minor_at] = '1';
        s.parser.emplace(s.req, s.max_body);
        used = s.parser->put(boost::asio::const_buffer(as_1_1.data(), as_1_1.size()), ec);
        break;
      }
      case version_verdict::other_major:
        s.fail(505, "only HTTP/1.x is served");
        return skipped + used;
      case version_verdict::malformed:
        break;  // Beast's 400 below
    }
  }
  if (!ec || ec == http::error::need_more) {
    // Beast ends lines at CRLF only and would wait for one forever (until the timeout): a bare LF
    // where it waits for a line's end (the header section, a chunk-size line, the CRLF after chunk
    // data, trailers) is a 400 now. RFC 9112 7.1 has no other line end in a chunked body; 2.2 lets
    // a recipient accept a bare LF in the header section, which Beast does not.
    if (!s.parser->is_done() && s.parser->awaiting_line() && has_bare_lf(bytes.substr(used)))
      s.fail(400, "a line ends in a bare LF");
    return skipped + used;
  }

  if (s.parser->status() != 0) {
    s.fail(s.parser->status(), s.parser->reason());
  } else if (ec == http::error::header_limit) {
    // Beast waits for the whole header before parsing a start line that arrived in pieces, so it
    // may hit its limit before it saw the request-line's end. A request-line that does not end
    // within max_target (+ method and version) is a long URI; otherwise the fields are too long.
    const auto eol = bytes.find("\r\n");
    const bool long_line =
        !s.parser->got_request_line() && eol > limits::max_target + 32;  // npos (no line end yet) is larger
    if (long_line)
      s.fail(414, "request-target too long");
    else
      s.fail(431, "header section too large");
  } else if (ec == http::error::body_limit) {
    s.fail(413, "body larger than --max-body");
  } else {
    s.fail(400, ec.message());
  }
  return skipped + used;
}

bool request_parser::started() const noexcept {
  return impl_->parser && impl_->parser->got_some();
}
bool request_parser::header_done() const noexcept {
  return impl_->parser && impl_->parser->is_header_done();
}
bool request_parser::awaiting_body_with_continue() const noexcept {
  const auto& s = *impl_;
  return s.status == 0 && s.parser && s.parser->is_header_done() && !s.parser->is_done() &&
         s.req.expect_continue && s.req.version == 11;
}
bool request_parser::done() const noexcept {
  return impl_->status == 0 && impl_->parser && impl_->parser->is_done();
}
int request_parser::error_status() const noexcept {
  return impl_->status;
}
std::string_view request_parser::error_reason() const noexcept {
  return impl_->reason;
}

request request_parser::take() {
  request out = std::move(impl_->req);
  reset();
  return out;
}

void request_parser::reset() noexcept {
  impl_->parser.reset();
  impl_->req = request{};
  impl_->status = 0;
  impl_->reason.clear();
}

}  // namespace pools::server::detail
