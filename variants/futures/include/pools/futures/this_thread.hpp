// SPDX-License-Identifier: MIT
// pools/futures/this_thread.hpp — which pool, and which of its workers, is running this code
// (BS::this_thread). Outside every pool both answers are empty.
//
//   if (auto i = pools::futures::this_thread::get_index()) { ... worker *i of its pool ... }
//
// The pool also uses this to refuse a wait() that would wait for the calling task itself.
#pragma once

#include <cstddef>
#include <optional>

namespace pools::futures {

namespace detail {
struct worker_identity {
  std::size_t index = 0;
  void* pool = nullptr;  // null on threads that are not workers of a futures pool
};
// One per thread; set by a worker when it starts, cleared when it ends.
inline thread_local worker_identity current_worker{};
}  // namespace detail

namespace this_thread {

/// The calling thread's index in its pool (0 .. get_thread_count() - 1), or empty when the
/// caller is not a worker of a futures pool.
inline std::optional<std::size_t> get_index() noexcept {
  if (detail::current_worker.pool == nullptr) return std::nullopt;
  return detail::current_worker.index;
}

/// The address of the pool whose worker is calling, or empty. Compare it with &pool; it is a
/// void* because the pool is a class template (thread_pool, priority_thread_pool).
inline std::optional<void*> get_pool() noexcept {
  if (detail::current_worker.pool == nullptr) return std::nullopt;
  return detail::current_worker.pool;
}

}  // namespace this_thread
}  // namespace pools::futures
