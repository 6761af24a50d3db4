// SPDX-License-Identifier: MIT
// pools/parallel_for.hpp — block-splitting parallel loops on any pools::Executor.
//
//   pools::parallel_for(ex, first, last, [](I i) { ... });            one call per index
//   pools::parallel_for_blocks(ex, first, last, [](I b, I e) { ... }); one call per block
//
// The range is half-open; empty and reversed ranges do nothing (pools/index_blocks.hpp).
// `blocks` defaults to ex.concurrency(). The calling thread blocks until every block has run,
// then rethrows the first exception a block threw (the other blocks still run to completion, so
// no block outlives the call and its references).
//
// Because the caller blocks a thread, do not call these from inside a task of a fixed-size pool
// whose workers may all be doing the same: that is the nested-wait deadlock the futures variant's
// README demonstrates. Variants offer fork-join that suspends instead of blocking.
#pragma once

#include <pools/executor.hpp>
#include <pools/index_blocks.hpp>
#include <pools/wait_group.hpp>

#include <concepts>
#include <cstddef>
#include <exception>
#include <mutex>
#include <type_traits>

namespace pools {

template <Executor E, std::integral A, std::integral B, class F>
void parallel_for_blocks(E& ex, A first_index, B last_index, F&& f, std::size_t blocks = 0) {
  using I = std::common_type_t<A, B>;
  static_assert(std::is_invocable_v<F&, I, I>, "parallel_for_blocks: f must be callable as f(begin, end)");
  const index_blocks<I> split(static_cast<I>(first_index), static_cast<I>(last_index),
                              blocks != 0 ? blocks : ex.concurrency());
  if (split.count() == 0) return;

  wait_group pending(static_cast<std::ptrdiff_t>(split.count()));
  std::mutex error_mutex;
  std::exception_ptr first_error;
  for (std::size_t k = 0; k < split.count(); ++k) {
    ex.post([&, k] {
      try {
        const auto [b, e] = split[k];
        f(b, e);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
      pending.done();
    });
  }
  pending.wait();
  if (first_error) std::rethrow_exception(first_error);
}

template <Executor E, std::integral A, std::integral B, class F>
void parallel_for(E& ex, A first_index, B last_index, F&& f, std::size_t blocks = 0) {
  using I = std::common_type_t<A, B>;
  static_assert(std::is_invocable_v<F&, I>, "parallel_for: f must be callable as f(index)");
  parallel_for_blocks(
      ex, first_index, last_index,
      [&f](I b, I e) {
        for (I i = b; i != e; ++i) f(i);
      },
      blocks);
}

}  // namespace pools
