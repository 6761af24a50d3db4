// SPDX-License-Identifier: MIT
// pools/fibers/operation_cancelled.hpp — what a cancelled wait throws.
//
//   try { auto v = ch.recv(); } catch (const pools::fibers::operation_cancelled&) { ... }
//
// A cancellable wait (channel send and receive, future get and wait, condition_variable waits,
// latch and wait_group waits, this_fiber::sleep_for/sleep_until, offload) throws it when the stop
// token of the fiber's task (this_fiber::get_stop_token()) is stopped before the wait completes.
// The type is the one every variant throws, pools::operation_cancelled
// (pools/operation_cancelled.hpp says why an exception); timed_out, with_timeout's, is one too.
#pragma once

#include <pools/operation_cancelled.hpp>

namespace pools::fibers {

using pools::operation_cancelled;
using pools::timed_out;

}  // namespace pools::fibers
