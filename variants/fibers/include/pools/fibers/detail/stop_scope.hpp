// SPDX-License-Identifier: MIT
// pools/fibers/detail/stop_scope.hpp — how a fiber gets its stop token: spawn(token, f) and
// post(token, f) (thread_pool.hpp, simulated.hpp) wrap f in a stop_scope.
#pragma once

#include <pools/fibers/detail/runtime.hpp>

#include <functional>
#include <stop_token>
#include <utility>

namespace pools::fibers::detail {

/// The callable of spawn(token, f): runs f with `token` as the fiber's stop token
/// (this_fiber::get_stop_token()) and puts back the one it replaced, also when f throws. The token
/// lives here, in the task, for as long as f runs.
template <class F>
struct stop_scope {
  std::stop_token token;
  F fn;

  decltype(auto) operator()() & { return call(fn); }
  decltype(auto) operator()() && { return call(std::move(fn)); }

 private:
  template <class G>
  decltype(auto) call(G&& g) {
    struct restore {
      const std::stop_token* previous;
      ~restore() { exchange_stop_token(previous); }
    } on_exit{exchange_stop_token(&token)};
    return std::invoke(std::forward<G>(g));
  }
};

}  // namespace pools::fibers::detail
