// SPDX-License-Identifier: MIT
// pools/coroutines/operation_cancelled.hpp — what a cancelled wait throws.
//
//   try { co_await sleep_for(pool, 10s); } catch (const pools::coroutines::operation_cancelled&) { ... }
//
// A wait that can be cancelled (sleep, channel send and receive, async_event, async_mutex lock,
// offload; docs/cancellation.md) throws operation_cancelled from its co_await when the stop token
// its task runs under is stopped before the wait completes. The type is the one every variant
// throws, pools::operation_cancelled (pools/operation_cancelled.hpp says why an exception).
#pragma once

#include <pools/operation_cancelled.hpp>

namespace pools::coroutines {

using pools::operation_cancelled;

}  // namespace pools::coroutines
