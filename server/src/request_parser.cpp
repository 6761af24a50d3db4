// The only translation unit of the core that includes Boost.Beast (see request_parser.hpp).
#include "request_parser.hpp"

#include <pools/server/options.hpp>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

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
    switch (field) {
      case http::field::host:
        if (has_host_) return reject(ec, 400, "more than one Host");
        has_host_ = true;
        break;
      case http::field::transfer_encoding:
        has_transfer_encoding_ = true;
        break;
      case http::field::content_type:
        req_.content_type.assign(value.data(), value.size());
        break;
      case http::field::expect:
        req_.expect_continue = iequals(value, "100-continue");
        break;
      default:
        break;
    }
  }

  void on_header_impl(error_code& ec) override {
    if (req_.version == 11 && !has_host_) return reject(ec, 400, "HTTP/1.1 request without Host");
    // Beast frames a body only by a final "chunked"; any other Transfer-Encoding would leave the
    // body to be parsed as the next request.
    if (has_transfer_encoding_ && !chunked()) return reject(ec, 400, "unsupported Transfer-Encoding");
    req_.keep_alive = keep_alive();
  }

  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code&) override {
    if (length) req_.body.reserve(static_cast<std::size_t>(*length));  // <= max_body: checked by Beast
  }

  std::size_t on_body_impl(string_view body, error_code&) override {
    req_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}

  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code&) override {
    req_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_finish_impl(error_code&) override {}

  request& req_;
  std::size_t header_bytes_ = 0;
  bool got_request_line_ = false;
  bool has_host_ = false;
  bool has_transfer_encoding_ = false;
  int status_ = 0;
  const char* reason_ = "";
};

}  // namespace

struct request_parser::impl {
  std::uint64_t max_body;
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
  const std::size_t used = s.parser->put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
  if (!ec || ec == http::error::need_more) return skipped + used;

  if (s.parser->status() != 0) {
    s.fail(s.parser->status(), s.parser->reason());
  } else if (ec == http::error::header_limit) {
    // Beast waits for the whole header before parsing a start line that arrived in pieces, so it
    // may hit its limit before it saw the request-line's end. A request-line that does not end
    // within max_target (+ method and version) is a long URI; otherwise the fields are too long.
    const auto eol = bytes.find("\r\n");
    const bool long_line =
        !s.parser->got_request_line() && (eol == std::string_view::npos || eol > limits::max_target + 32);
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
