// SPDX-License-Identifier: MIT
// pools/coroutines/coroutines.hpp — everything of the coroutines variant in one include.
#pragma once

#include <pools/coroutines/async_event.hpp>
#include <pools/coroutines/async_latch.hpp>
#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/offload.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/sleep.hpp>
#include <pools/coroutines/stack_task.hpp>
#include <pools/coroutines/stop_token.hpp>
#include <pools/coroutines/sync_wait.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/textbook_pool.hpp>
#include <pools/coroutines/thread_pool.hpp>
#include <pools/coroutines/when_all.hpp>
#include <pools/coroutines/when_any.hpp>
#include <pools/coroutines/with_timeout.hpp>
