// SPDX-License-Identifier: MIT
// pools/coroutines/when_all.hpp — fork/join: run tasks in parallel, resume when all are done.
//
//   auto [a, b] = co_await when_all(fib(n - 1), fib(n - 2));           // tuple
//   std::vector<int> rs = co_await when_all(std::move(vector_of_tasks)); // vector
//
// How: the parent suspends and stores its handle in a join counter (in its own frame). Children
// 1..n-1 are forked — handed to the pool the parent runs on, where another thread may pick them
// up — and the parent transfers straight into child 0. A finishing child counts down; the last
// one resumes the parent by symmetric transfer, on whichever thread that child finished.
//
// On the textbook_pool a forked child goes onto the pool's one shared queue (scheduler::enqueue),
// and a child that is not the last returns to its thread's loop. On the tuned thread_pool it is
// pushed onto the current worker's own deque (no lock, no virtual call: the fork/join hot path),
// where an idle worker may steal it, and a child that is not the last moves on to the next local
// work (usually its next sibling, popped back from the deque):
//
//   parent ──suspend──► push c2, c1 ──transfer──► c0 ... c0 done ─► pop c1 ─► c1 ... c1 done ─► ...
//                                     thief: steal c2 ─► c2 ... c2 done (last?) ─► resume parent
//
// Exceptions: every child runs to completion (no child outlives the co_await, so references the
// children hold stay valid); then the exception of the lowest-numbered child that failed is
// rethrown in the parent — a failure other than operation_cancelled if there is one, since the
// cancellations are usually what the failure caused (below). A task<void> child contributes
// std::monostate to the tuple; a range of task<void> gives void.
//
// Stop tokens (stop_token.hpp): the children run under the parent's token. When the parent runs
// under a stoppable token, when_all gives its children a stop source of their own, linked to it
// (a stop from above still reaches them), and the first child to fail requests a stop on it: the
// siblings' cancellable waits end with operation_cancelled instead of running on for a result
// that will be thrown away. Under no token (as in fork/join compute) nothing of this runs: no
// stop source is made, and a finishing child tests one pointer it already has.
//
// Must be awaited on a thread of a pool (thread_pool or textbook_pool: a task started by
// sync_wait, spawn or schedule() is); elsewhere await_suspend throws std::logic_error before any
// child starts.
#pragma once

#include <pools/coroutines/detail/join_state.hpp>
#include <pools/coroutines/detail/linked_stop_source.hpp>
#include <pools/coroutines/detail/worker.hpp>
#include <pools/coroutines/operation_cancelled.hpp>
#include <pools/coroutines/scheduler.hpp>
#include <pools/coroutines/task.hpp>
#include <pools/coroutines/thread_pool.hpp>

#include <array>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <iterator>
#include <memory>
#include <ranges>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace pools::coroutines {

namespace detail {

template <class T>
using when_all_value_t = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

template <class T>
when_all_value_t<T> take_for_when_all(task<T>& t) {
  if constexpr (std::is_void_v<T>) {
    t.handle().promise().take_result();
    return {};
  } else {
    return t.handle().promise().take_result();
  }
}

template <class>
inline constexpr bool is_task = false;
template <class T>
inline constexpr bool is_task<task<T>> = true;

[[noreturn, gnu::noinline, gnu::cold]] inline void throw_not_on_worker(const char* who) {
  throw std::logic_error(std::string(who) +
                         " must be awaited on a worker thread of a pools::coroutines pool (thread_pool or "
                         "textbook_pool: start the coroutine with sync_wait, spawn or schedule())");
}

[[noreturn, gnu::noinline, gnu::cold]] inline void throw_empty_task() {
  throw std::invalid_argument("pools::coroutines::when_all: empty task");
}

// Where a when_all on this thread forks its children: onto the tuned pool worker's own deque
// (push_local, inlined: the fork/join hot path) or, on any other pool's thread, through that
// pool's enqueue() (a virtual call). fork(child) forks one child, testing which per call;
// with(body) tests once and calls body(push), so the tuple form's fixed run of pushes compiles
// to the tuned pool's pushes alone (a test per child measured 1-2 % slower on fib and skynet;
// in the range form's loop it measured no difference, and hoisting it there measured slower).
struct fork_target {
  worker* tuned;
  scheduler* other;
  void operator()(std::coroutine_handle<> child) const {
    if (tuned != nullptr) [[likely]] {
      tuned->pool->push_local(*tuned, child);
    } else {
      other->enqueue(child);
    }
  }
  template <class Body>
  void with(Body&& body) const {
    if (tuned != nullptr) [[likely]] {
      body([w = tuned](std::coroutine_handle<> child) { w->pool->push_local(*w, child); });
    } else {
      body([s = other](std::coroutine_handle<> child) { s->enqueue(child); });
    }
  }
};

inline fork_target require_pool(const char* who) {
  if (worker* w = tl_worker) return {w, nullptr};
  scheduler* s = current_scheduler();
  if (s == nullptr) [[unlikely]]
    throw_not_on_worker(who);
  return {nullptr, s};
}

inline void require_valid(bool valid) {
  if (!valid) [[unlikely]]
    throw_empty_task();
}

// The stop token a when_all's children run under: the parent's, or (when the parent's can be
// stopped) the token of a source of the join's own, linked to it, which a failing child stops.
// Cold and out of line: fork/join compute runs under no token and never gets here, and this
// keeps the make_unique and the linked source's code out of its hot path.
[[gnu::noinline, gnu::cold]] inline const std::stop_token* children_stop_token(
    const std::stop_token* token, std::unique_ptr<linked_stop_source>& own, join_state& join) {
  if (!token->stop_possible()) return token;
  own = std::make_unique<linked_stop_source>(token);
  join.set_stop_source(&own->source());
  return &own->token();
}

// Which child's exception a when_all rethrows: the lowest-numbered failure that is not a
// cancellation, else the lowest-numbered cancellation. Cold: runs only when some child threw.
[[noreturn, gnu::noinline, gnu::cold]] inline void rethrow_first_failure(const std::exception_ptr* errors,
                                                                         std::size_t n) {
  const std::exception_ptr* first = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    if (errors[i] == nullptr) continue;
    if (first == nullptr) first = &errors[i];
    try {
      std::rethrow_exception(errors[i]);
    } catch (const operation_cancelled&) {
      continue;
    } catch (...) {
    }
    std::rethrow_exception(errors[i]);
  }
  std::rethrow_exception(*first);
}

}  // namespace detail

template <class... Ts>
class [[nodiscard]] when_all_awaitable {
 public:
  explicit when_all_awaitable(task<Ts>... tasks) : tasks_(std::move(tasks)...), join_(sizeof...(Ts)) {}
  when_all_awaitable(when_all_awaitable&&) =
      delete;  // the join state must not move once children point at it

  bool await_ready() const noexcept { return sizeof...(Ts) == 0; }

  template <class Promise>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> parent) {
    const detail::fork_target fork = detail::require_pool("when_all");
    std::apply([](auto&... t) { (detail::require_valid(t.valid()), ...); }, tasks_);
    join_.set_parent(parent);
    if constexpr (sizeof...(Ts) == 2) join_.set_pair_sibling(std::get<1>(tasks_).handle());
    std::apply([this](auto&... t) { (t.handle().promise().set_join(&join_), ...); }, tasks_);
    // Under a stop token (rare in compute): the children run under it, or under a linked source.
    if (const std::stop_token* token = detail::stop_token_of(parent)) [[unlikely]] {
      token = detail::children_stop_token(token, stop_, join_);
      std::apply([token](auto&... t) { (t.handle().promise().inherit_stop_token(token), ...); }, tasks_);
    }
    // relaxed stores above are published by each fork (the deque's release store of bottom, or
    // the textbook queue's mutex) to the thread that runs the child, or are on this thread (child 0).
    if constexpr (sizeof...(Ts) > 1) {  // this->: Clang misses an implicit this in a generic lambda
      fork.with([this](const auto& push) { this->fork_from<sizeof...(Ts) - 1>(push); });
    }
    return std::get<0>(tasks_).handle();
  }

  std::tuple<detail::when_all_value_t<Ts>...> await_resume() {
    const bool failed =
        std::apply([](auto&... t) { return (t.handle().promise().has_exception() || ...); }, tasks_);
    if (failed) [[unlikely]] {
      const auto errors = std::apply(
          [](auto&... t) {
            return std::array<std::exception_ptr, sizeof...(Ts)>{t.handle().promise().exception()...};
          },
          tasks_);
      detail::rethrow_first_failure(errors.data(), errors.size());
    }
    return std::apply(
        [](auto&... t) {
          return std::tuple<detail::when_all_value_t<Ts>...>(detail::take_for_when_all(t)...);
        },
        tasks_);
  }

 private:
  // Pushes children I, I-1, ..., 1: the owner pops child 1 first; thieves take the highest first.
  template <std::size_t I, class Push>
  void fork_from(const Push& push) {
    if constexpr (I >= 1) {
      push(std::get<I>(tasks_).handle());
      fork_from<I - 1>(push);
    }
  }

  std::tuple<task<Ts>...> tasks_;
  detail::join_state join_;
  std::unique_ptr<detail::linked_stop_source> stop_;  // only under a stoppable token
};

/// Runs every task in parallel; the tuple of their results (std::monostate for task<void>).
template <class... Ts>
when_all_awaitable<Ts...> when_all(task<Ts>... tasks) {
  return when_all_awaitable<Ts...>(std::move(tasks)...);
}

template <class T>
class [[nodiscard]] when_all_range_awaitable {
 public:
  explicit when_all_range_awaitable(std::vector<task<T>> tasks)
      : tasks_(std::move(tasks)), join_(tasks_.size()) {}
  when_all_range_awaitable(when_all_range_awaitable&&) = delete;

  bool await_ready() const noexcept { return tasks_.empty(); }

  template <class Promise>
  std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> parent) {
    const detail::fork_target fork = detail::require_pool("when_all");
    for (auto& t : tasks_) detail::require_valid(t.valid());
    join_.set_parent(parent);
    if (tasks_.size() == 2) join_.set_pair_sibling(tasks_[1].handle());
    for (auto& t : tasks_) t.handle().promise().set_join(&join_);
    if (const std::stop_token* token = detail::stop_token_of(parent)) [[unlikely]] {
      token = detail::children_stop_token(token, stop_, join_);
      for (auto& t : tasks_) t.handle().promise().inherit_stop_token(token);
    }
    for (std::size_t i = tasks_.size(); i-- > 1;) fork(tasks_[i].handle());
    return tasks_.front().handle();
  }

  auto await_resume() {
    for (auto& t : tasks_) {
      if (t.handle().promise().has_exception()) [[unlikely]]
        rethrow_first_failure();
    }
    if constexpr (std::is_void_v<T>) {
      return;
    } else {
      std::vector<T> results;
      results.reserve(tasks_.size());
      for (auto& t : tasks_) results.push_back(t.handle().promise().take_result());
      return results;
    }
  }

 private:
  [[noreturn, gnu::noinline, gnu::cold]] void rethrow_first_failure() const {
    std::vector<std::exception_ptr> errors;
    errors.reserve(tasks_.size());
    for (const auto& t : tasks_) errors.push_back(t.handle().promise().exception());
    detail::rethrow_first_failure(errors.data(), errors.size());
  }

  std::vector<task<T>> tasks_;
  detail::join_state join_;
  std::unique_ptr<detail::linked_stop_source> stop_;  // only under a stoppable token
};

/// Runs every task of the vector in parallel; a vector of their results in the same order (void
/// for task<void>).
template <class T>
when_all_range_awaitable<T> when_all(std::vector<task<T>> tasks) {
  return when_all_range_awaitable<T>(std::move(tasks));
}

/// Any other range of tasks (its elements are moved from): as for a vector.
template <std::ranges::input_range R>
  requires detail::is_task<std::ranges::range_value_t<R>> &&
           (!std::is_same_v<std::remove_cvref_t<R>, std::vector<std::ranges::range_value_t<R>>>)
auto when_all(R&& range) {
  using task_t = std::ranges::range_value_t<R>;
  std::vector<task_t> tasks;
  if constexpr (std::ranges::sized_range<R>)
    tasks.reserve(static_cast<std::size_t>(std::ranges::size(range)));
  for (auto&& t : range) tasks.push_back(std::move(t));
  return when_all_range_awaitable<typename task_t::value_type>(std::move(tasks));
}

}  // namespace pools::coroutines
