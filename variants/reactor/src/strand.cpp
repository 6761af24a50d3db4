// SPDX-License-Identifier: MIT
#include <pools/reactor/strand.hpp>

#include <boost/asio/strand.hpp>

namespace pools::reactor {

boost::asio::any_io_executor make_strand(executor& ex) {
  auto& ctx = ex.next_context();
  if (ex.strategy() == strategy::per_thread) return ctx.get_executor();  // one thread: serial already
  return boost::asio::make_strand(ctx);
}

}  // namespace pools::reactor
