// SPDX-License-Identifier: MIT
// server_<name> for a variant without a driver of its own: half-sync/half-async over the
// pools::Executor concept alone. How it waits: the I/O side never does; the pool's workers do.
//
//   main      -> pools::server::run(program, argc, argv, serve)
//   serve     -> the pool, one Asio I/O thread (this one), a pools::server::listener on it
//   session   -> pools::server::pool_session: the connection loop in callbacks on the I/O thread,
//                each job one post()ed task that runs it start to end and posts its completion back
//
// pools_add_variant builds it over the variant's first executor type, named by a header CMake
// generates (pools_generated_executor.hpp: pools::generated::executor and ::name). So a pool that
// passes the conformance suite serves HTTP without another line: the shape of server_futures,
// without the futures pool's statistics and wait().
#include <pools/server/main.hpp>
#include <pools/server/pool_session.hpp>

#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <pools_generated_executor.hpp>
#include <string>

namespace {

namespace asio = boost::asio;
namespace srv = pools::server;
using pool_type = pools::generated::executor;
using session = srv::pool_session<pool_type>;

void serve(srv::app& app) {
  asio::io_context io(1);
  // After io (its tasks post to io); optional, to destroy it before the final poll below.
  std::optional<pool_type> pool(std::in_place, app.opts().threads);
  srv::listener listener(app, io.get_executor(), [&](asio::ip::tcp::socket socket) {
    return std::make_shared<session>(std::move(socket), app, *pool);
  });
  io.run();  // until the listener is done: a signal came and the sessions have closed
  // A dropped session may still have tasks on the pool. Destroying the pool drains them (the
  // Executor contract); their completions (to closed sessions) are then delivered here.
  pool.reset();
  io.restart();
  io.poll();
}

const std::string summary = std::string("half-sync/half-async: one Asio I/O thread, jobs posted to ") +
                            pools::generated::type_name + " (the generic driver)";

}  // namespace

int main(int argc, char** argv) {
  return srv::run({.name = pools::generated::name, .summary = summary}, argc, argv, serve);
}
