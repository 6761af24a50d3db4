// SPDX-License-Identifier: MIT
#include <pools/server/descriptors.hpp>
#include <pools/server/log.hpp>
#include <pools/server/main.hpp>
#include <pools/trace.hpp>
#include <pools/trace_export.hpp>

#include <csignal>
#include <exception>
#include <string>
#include <system_error>

namespace pools::server {

int run(const program& prog, int argc, char** argv, const std::function<void(app&)>& serve) {
  auto parsed = parse_command_line(prog, argc, argv);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  auto& opts = std::get<options>(parsed);
  set_log_name("server_" + std::string(prog.name));
  // A peer that disappears must cost one failed write (EPIPE), not the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Before any descriptor is opened: --max-connections must fit RLIMIT_NOFILE (descriptors.hpp).
  fit_descriptor_limit(opts);
  const std::size_t threads = opts.threads;
  try {
    app a(std::move(opts), std::string(prog.name), prog.every_request_is_a_job);
    const auto& o = a.opts();
    log_info(
        "{} threads{}, root {}, max body {} B, max {} connections, timeouts idle {} ms / header {} ms / "
        "shutdown {} ms",
        o.threads, o.strategy.empty() ? "" : ", strategy " + o.strategy,
        o.root.empty() ? "(none)" : o.root.string(), o.max_body, o.max_connections, o.idle_timeout.count(),
        o.header_timeout.count(), o.shutdown_timeout.count());
    POOLS_TRACE_THREAD("server main thread");
    serve(a);
    const auto& c = a.counters();
    log_info("stopped after {} requests on {} connections", c.requests.load(), c.accepted.load());
    // serve() has destroyed the pool: its threads have stopped writing their rings. (if constexpr:
    // without POOLS_TRACE no trace code is linked.)
    if constexpr (pools::trace::compiled_in) {
      if (!o.trace.empty()) {
        // stderr, with the logs: stdout carries only the "listening on" line.
        pools::trace::print_summary(pools::trace::write_chrome_json(o.trace), stderr);
        log_info("trace written to {} (open it in https://ui.perfetto.dev)", o.trace);
      }
    }
    return 0;
  } catch (const std::system_error& e) {
    // A thread that cannot start (pthread_create: no memory for its stack, or a limit on threads)
    // reaches here as std::system_error with EAGAIN, from std::thread in the pool's constructor,
    // which has stopped and joined the threads it did start. One line and exit 1, not a stack.
    if (e.code() == std::errc::resource_unavailable_try_again)
      log_error("cannot start {} threads: {}", threads, e.what());
    else
      log_error("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    log_error("{}", e.what());
    return 1;
  }
}

}  // namespace pools::server
