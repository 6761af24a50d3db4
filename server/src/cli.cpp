// SPDX-License-Identifier: MIT
#include <pools/server/cli.hpp>
#include <pools/trace.hpp>

#include <arpa/inet.h>
#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>
#include <sstream>
#include <thread>

namespace pools::server {

namespace po = boost::program_options;

namespace {

/// Numbers are taken as strings and converted here: program_options would accept "-1" for an
/// unsigned option (it wraps), and its messages do not say the range.
struct usage_error {
  std::string what;
};

std::uint64_t number(const po::variables_map& vm, const char* name, std::uint64_t lo, std::uint64_t hi) {
  const auto& text = vm[name].as<std::string>();
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi)
    throw usage_error{fmt::format("--{} '{}' must be an integer in {}..{}", name, text, lo, hi)};
  return v;
}

po::options_description describe(const program& prog) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  po::options_description d(fmt::format("server_{} — {}\n\nOptions", prog.name, prog.summary));
  // clang-format off
  d.add_options()
    ("help,h", "print this help and exit")
    ("port,p", po::value<std::string>()->default_value("8080"), "TCP port; 0 picks a free one, printed as "
                                                               "'listening on ADDRESS:PORT' on stdout")
    ("threads,t", po::value<std::string>()->default_value(std::to_string(hw)), "threads of the pool (1..1024)")
    ("root", po::value<std::string>(), "directory served under /static/ (default: none, /static/... is 404)")
    ("max-body", po::value<std::string>()->default_value("1048576"), "largest request body in bytes (0..1073741824); "
                                                                     "larger gets 413")
    ("strategy", po::value<std::string>(), prog.strategies.empty()
        ? "(this server has no strategies)"
        : fmt::format("one of: {} (default {})", fmt::join(prog.strategies, ", "), prog.strategies.front()).c_str())
    ("max-connections", po::value<std::string>()->default_value("10000"), "open connections past which new ones "
                                                                         "get 503 (1..1000000)")
    ("idle-timeout-ms", po::value<std::string>()->default_value("30000"), "close an idle keep-alive connection, "
                                                                         "a stalled body or write, after this")
    ("header-timeout-ms", po::value<std::string>()->default_value("10000"), "a request header must arrive within "
                                                                           "this from its first byte, or 408")
    ("shutdown-timeout-ms", po::value<std::string>()->default_value("10000"), "SIGINT/SIGTERM: in-flight requests "
                                                                             "get this long to finish")
    ("queue-limit", po::value<std::string>(), prog.bounded_queue
        ? "jobs waiting to start in the pool past which a request gets 503 with Retry-After "
          "(0..10000000; 0: unbounded; default: the --max-connections value)"
        : "(this server has no job queue to bound)")
    ("address", po::value<std::string>()->default_value("127.0.0.1"), "IP address to listen on")
    ("access-log", po::bool_switch(), "log one line per response on stderr")
    ("trace", po::value<std::string>(), "on exit, write the pool's and the connections' events (the last "
        "ones of each thread) to FILE as Chrome Trace Event JSON for Perfetto, and print a summary; "
        "needs a build configured with -DPOOLS_TRACE=ON");
  // clang-format on
  return d;
}

}  // namespace

std::string usage(const program& prog) {
  std::ostringstream out;
  out << describe(prog);
  return out.str();
}

std::variant<options, int> parse_command_line(const program& prog, int argc, const char* const* argv) {
  const auto fail = [](const std::string& what) {
    fmt::print(stderr, "error: {}\n(run with --help for usage)\n", what);
    return 2;
  };
  try {
    const auto description = describe(prog);
    po::variables_map vm;
    const po::positional_options_description none;  // so that a stray word is an error, not ignored
    po::store(po::command_line_parser(argc, argv).options(description).positional(none).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      fmt::print(stdout, "usage: server_{} [options]\n{}", prog.name, usage(prog));
      return 0;
    }
    options o;
    o.port = static_cast<std::uint16_t>(number(vm, "port", 0, 65535));
    o.threads = number(vm, "threads", 1, 1024);
    o.max_body = number(vm, "max-body", 0, std::uint64_t{1} << 30);
    o.max_connections = number(vm, "max-connections", 1, 1'000'000);
    o.idle_timeout = std::chrono::milliseconds(number(vm, "idle-timeout-ms", 1, 3'600'000));
    o.header_timeout = std::chrono::milliseconds(number(vm, "header-timeout-ms", 1, 3'600'000));
    o.shutdown_timeout = std::chrono::milliseconds(number(vm, "shutdown-timeout-ms", 0, 3'600'000));
    o.queue_limit = o.max_connections;  // one waiting job per connection allowed, on average
    if (vm.count("queue-limit")) {
      if (!prog.bounded_queue)
        return fail(
            fmt::format("server_{} has no job queue to bound (--queue-limit); server_futures and "
                        "server_coroutines have one",
                        prog.name));
      o.queue_limit = number(vm, "queue-limit", 0, 10'000'000);
    }
    o.access_log = vm["access-log"].as<bool>();
    if (vm.count("trace")) {
      if (!pools::trace::compiled_in) return fail(std::string(pools::trace::not_compiled_message));
      o.trace = vm["trace"].as<std::string>();
      if (o.trace.empty()) return fail("--trace needs a file name");
    }

    o.address = vm["address"].as<std::string>();
    unsigned char probe[16];
    if (inet_pton(AF_INET, o.address.c_str(), probe) != 1 &&
        inet_pton(AF_INET6, o.address.c_str(), probe) != 1)
      return fail(fmt::format("--address '{}' is not an IPv4 or IPv6 address", o.address));

    if (vm.count("root")) {
      std::error_code ec;
      const std::filesystem::path root = vm["root"].as<std::string>();
      if (!std::filesystem::is_directory(root, ec))
        return fail(fmt::format("--root '{}' is not a directory", root.string()));
      o.root = std::filesystem::canonical(root, ec);
      if (ec) return fail(fmt::format("--root '{}': {}", root.string(), ec.message()));
    }

    if (vm.count("strategy")) {
      const auto& s = vm["strategy"].as<std::string>();
      if (prog.strategies.empty())
        return fail(fmt::format("server_{} has no strategies (--strategy {})", prog.name, s));
      if (std::find(prog.strategies.begin(), prog.strategies.end(), s) == prog.strategies.end())
        return fail(fmt::format("unknown --strategy '{}'; known: {}", s, fmt::join(prog.strategies, ", ")));
      o.strategy = s;
    } else if (!prog.strategies.empty()) {
      o.strategy = std::string(prog.strategies.front());
    }
    return o;
  } catch (const usage_error& e) {
    return fail(e.what);
  } catch (const po::error& e) {
    return fail(e.what());
  }
}

}  // namespace pools::server
