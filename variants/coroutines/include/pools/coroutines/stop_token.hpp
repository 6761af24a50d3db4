// SPDX-License-Identifier: MIT
// pools/coroutines/stop_token.hpp — the stop token a task runs under: read it, or give one.
//
//   task<void> poll(thread_pool& pool) {
//     std::stop_token stop = co_await get_stop_token();
//     while (!stop.stop_requested()) { ...; co_await sleep_for(pool, 10ms); }
//   }
//   std::stop_source source;
//   sync_wait(pool, with_stop_token(source.get_token(), poll(pool)));  // source.request_stop() ends it
//
// A task runs under the token its awaiter runs under (task.hpp): a whole tree of co_awaits shares
// one token without passing it as a parameter. with_stop_token gives a task (and so its tree) a
// token; when_all, when_any and with_timeout give their children a token of their own, linked to
// the caller's. A task under no token reads an empty std::stop_token (stop_possible() is false),
// and every wait in it behaves as it did before cancellation existed, at no cost.
//
// The waits that end early on a stop (sleep.hpp, channel.hpp, async_event.hpp, async_mutex.hpp,
// offload.hpp) read the token
// themselves; a task that computes in a loop reads it with get_stop_token() and returns, or
// throws operation_cancelled (operation_cancelled.hpp), as it sees fit.
#pragma once

#include <pools/coroutines/task.hpp>

#include <coroutine>
#include <stop_token>
#include <type_traits>
#include <utility>

namespace pools::coroutines {

/// `co_await get_stop_token()` in a task: a copy of the token it runs under (never suspends).
struct get_stop_token_awaiter {
  bool await_ready() const noexcept { return false; }
  template <class Promise>
  bool await_suspend(std::coroutine_handle<Promise> h) noexcept {
    static_assert(std::is_base_of_v<detail::promise_base, Promise>,
                  "co_await get_stop_token() reads the token of a pools::coroutines::task");
    if (const std::stop_token* t = h.promise().stop_token()) token_ = *t;
    return false;  // go on at once: the token was read from the promise
  }
  std::stop_token await_resume() noexcept { return std::move(token_); }

 private:
  std::stop_token token_;
};

inline get_stop_token_awaiter get_stop_token() noexcept {
  return {};
}

/// Runs `t` (and everything it awaits) under `token`, in place of the token of whoever awaits
/// this. The token is kept in this coroutine's frame, which outlives `t`.
template <class T>
task<T> with_stop_token(std::stop_token token, task<T> t) {
  if (!t.valid()) detail::throw_invalid_task("pools::coroutines::with_stop_token: empty task");
  t.handle().promise().set_stop_token(&token);
  co_return co_await std::move(t);
}

inline task<void> with_stop_token(std::stop_token token, task<void> t) {
  if (!t.valid()) detail::throw_invalid_task("pools::coroutines::with_stop_token: empty task");
  t.handle().promise().set_stop_token(&token);
  co_await std::move(t);
}

}  // namespace pools::coroutines
