// SPDX-License-Identifier: MIT
// pools/reactor/strand.hpp — an executor whose handlers never run at the same time.
//
// A connection's handlers (read done, write done, timeout) all touch the connection's state. If
// two of them can run at once on two threads, that state needs a lock — or the handlers need a
// strand: an executor that runs the handlers given to it one at a time, in order, on whatever
// thread. Put every I/O object of one connection on the same strand and its handlers never race.
//
//   per_thread  an io_context with one thread is already a strand: make_strand() returns the
//               next io_context's plain executor (round-robin), at no cost.
//   shared      make_strand() returns a new asio::strand over the one io_context: one small
//               allocation per strand, and a handoff through the strand's queue per handler.
//
// Both come back as asio::any_io_executor, the executor type Asio's I/O objects use by default
// (asio::ip::tcp::socket is basic_stream_socket<tcp, any_io_executor>), so a server driver is
// written once for both strategies.
#pragma once

#include <pools/reactor/executor.hpp>

#include <boost/asio/any_io_executor.hpp>

namespace pools::reactor {

/// A serialising executor for one connection (or any group of handlers sharing state), on the
/// io_context ex.next_context() picks. Same stopping rules as next_context().
boost::asio::any_io_executor make_strand(executor& ex);

}  // namespace pools::reactor
