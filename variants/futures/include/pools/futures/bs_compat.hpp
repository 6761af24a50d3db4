// SPDX-License-Identifier: MIT
// pools/futures/bs_compat.hpp — BS::thread_pool v5.1's API, spelled as BS spells it, on top of
// pools::futures::basic_thread_pool. For code written against BS::thread_pool that should run on
// this pool without edits:
//
//   #include <pools/futures/bs_compat.hpp>
//   BS::thread_pool pool;                                   // pools::futures::thread_pool inside
//   auto f = pool.submit_task([] { return 42; });
//   pool.detach_loop(-5, 10u, [](std::int64_t i) { ... }); // 15 iterations, as in BS
//
// Nothing here is BS's code: every name maps onto the pool's own API, and where BS's spelling
// differs from the pool's the difference is the whole of what this header holds:
//   * the priority goes *last* and is a plain std::int8_t (BS::pr is an unscoped enum, so
//     `BS::pr::high + 1` is an int, as in BS); the pool's own API takes a strong priority_t first;
//   * the options are BS's bit set (tp::priority | tp::pause | tp::wait_deadlock_checks); pausing
//     and wait-deadlock checks are always on in this pool, so only tp::priority selects a type;
//   * the version constants say which BS API this header offers (5.1.0), not this project's.
// The deliberate differences from BS (variants/futures/README.md, "Differences from
// BS::thread_pool") hold here too: e.g. reset(n) keeps the init function, multi_future::get()
// waits for every future.
//
// BS_THREAD_POOL_NATIVE_EXTENSIONS, defined before the include, adds BS's native extensions
// (thread names, affinity, OS priorities) from pools/futures/native.hpp, on Linux outside the
// portable build; elsewhere BS::thread_pool_native_extensions is false and they are absent.
#pragma once

#include <pools/futures/index_type.hpp>
#include <pools/futures/multi_future.hpp>
#include <pools/futures/priority.hpp>
#include <pools/futures/synced_stream.hpp>
#include <pools/futures/this_thread.hpp>
#include <pools/futures/thread_pool.hpp>

#include <compare>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <ostream>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(BS_THREAD_POOL_NATIVE_EXTENSIONS) && defined(__linux__) && !defined(POOLS_PORTABLE)
#include <pools/futures/native.hpp>
#define POOLS_BS_COMPAT_NATIVE 1
#else
#define POOLS_BS_COMPAT_NATIVE 0
#endif

// The BS::thread_pool release whose API this header offers.
#define BS_THREAD_POOL_VERSION_MAJOR 5
#define BS_THREAD_POOL_VERSION_MINOR 1
#define BS_THREAD_POOL_VERSION_PATCH 0

namespace BS {

struct version {
  constexpr version(std::uint64_t major_, std::uint64_t minor_, std::uint64_t patch_) noexcept
      : major(major_), minor(minor_), patch(patch_) {}
  constexpr bool operator==(const version&) const noexcept = default;
  // Written out, not defaulted: clang-tidy 14 reports a defaulted <=> as comparing with a literal 0.
  constexpr std::strong_ordering operator<=>(const version& other) const noexcept {
    return std::tie(major, minor, patch) <=> std::tie(other.major, other.minor, other.patch);
  }
  std::string to_string() const {
    return std::to_string(major) + '.' + std::to_string(minor) + '.' + std::to_string(patch);
  }
  friend std::ostream& operator<<(std::ostream& out, const version& v) { return out << v.to_string(); }
  std::uint64_t major;
  std::uint64_t minor;
  std::uint64_t patch;
};

inline constexpr version thread_pool_version(BS_THREAD_POOL_VERSION_MAJOR, BS_THREAD_POOL_VERSION_MINOR,
                                             BS_THREAD_POOL_VERSION_PATCH);
inline constexpr bool thread_pool_module = false;      // a header, not a C++20 module
inline constexpr bool thread_pool_import_std = false;  // #include <...>, not `import std`
inline constexpr bool thread_pool_native_extensions = POOLS_BS_COMPAT_NATIVE != 0;

// ---- options ---------------------------------------------------------------------------------
using opt_t = std::uint8_t;
enum class tp : opt_t { none = 0, priority = 1, pause = 2, wait_deadlock_checks = 4 };
constexpr tp operator|(tp a, tp b) noexcept {
  return static_cast<tp>(static_cast<opt_t>(a) | static_cast<opt_t>(b));
}
constexpr tp operator&(tp a, tp b) noexcept {
  return static_cast<tp>(static_cast<opt_t>(a) & static_cast<opt_t>(b));
}
constexpr tp operator^(tp a, tp b) noexcept {
  return static_cast<tp>(static_cast<opt_t>(a) ^ static_cast<opt_t>(b));
}
constexpr tp operator~(tp a) noexcept {
  return static_cast<tp>(~static_cast<opt_t>(a));
}
constexpr tp& operator|=(tp& a, tp b) noexcept {
  return a = a | b;
}
constexpr tp& operator&=(tp& a, tp b) noexcept {
  return a = a & b;
}
constexpr tp& operator^=(tp& a, tp b) noexcept {
  return a = a ^ b;
}

// ---- priorities: integers, as in BS ----------------------------------------------------------
using priority_t = std::int8_t;
// Unscoped on purpose: BS code does arithmetic on these (`BS::pr::high + 1`, comparisons with
// integers); the pool's own pools::futures::pr constants are a strong type instead.
enum pr : priority_t { lowest = -128, low = -64, normal = 0, high = +64, highest = +127 };

// ---- the types the pool already has under BS's names ------------------------------------------
template <class T>
using multi_future = pools::futures::multi_future<T>;
using pools::futures::common_index_type;
using pools::futures::common_index_type_t;
using pools::futures::synced_stream;
using wait_deadlock = pools::futures::wait_deadlock;

namespace this_thread {
using pools::futures::this_thread::get_index;
using pools::futures::this_thread::get_pool;
#if POOLS_BS_COMPAT_NATIVE
using pools::futures::native::get_os_thread_affinity;
using pools::futures::native::get_os_thread_name;
using pools::futures::native::get_os_thread_priority;
using pools::futures::native::set_os_thread_affinity;
using pools::futures::native::set_os_thread_name;
using pools::futures::native::set_os_thread_priority;
#endif
}  // namespace this_thread

#if POOLS_BS_COMPAT_NATIVE
using pools::futures::native::get_os_process_affinity;
using pools::futures::native::get_os_process_priority;
using pools::futures::native::os_process_priority;
using pools::futures::native::os_thread_priority;
using pools::futures::native::set_os_process_affinity;
using pools::futures::native::set_os_process_priority;
#endif

namespace compat_detail {
constexpr pools::futures::tp::opt_t pool_options(tp options) noexcept {
  return (options & tp::priority) != tp::none ? pools::futures::tp::priority : pools::futures::tp::none;
}
template <class F>
concept init_function = pools::futures::thread_function<F>;
}  // namespace compat_detail

// ---- the pool ----------------------------------------------------------------------------------
// Derived, not an alias template: `BS::thread_pool pool;` must deduce thread_pool<tp::none> from
// the default template argument, and CTAD through alias templates is missing from Clang 14. The
// constructors are declared here (not inherited) for the same reason: only declared constructors
// give deduction guides.
template <tp Options = tp::none>
class thread_pool : public pools::futures::basic_thread_pool<compat_detail::pool_options(Options)> {
  using base = pools::futures::basic_thread_pool<compat_detail::pool_options(Options)>;

 public:
  static constexpr bool priority_enabled = (Options & tp::priority) != tp::none;
  static constexpr bool pause_enabled = true;                 // always on in this pool
  static constexpr bool wait_deadlock_checks_enabled = true;  // always on in this pool

  thread_pool() : base(0) {}
  explicit thread_pool(std::size_t threads) : base(threads) {}
  template <compat_detail::init_function F>
  explicit thread_pool(F&& init) : base(0, std::forward<F>(init)) {}
  template <compat_detail::init_function F>
  thread_pool(std::size_t threads, F&& init) : base(threads, std::forward<F>(init)) {}

  // Every task function below is BS's signature (priority last, defaulted) forwarding to the
  // pool's (priority first, only in priority pools). Without tp::priority the priority is
  // accepted and ignored, as BS does.

  template <class F>
  void detach_task(F&& task, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      base::detach_task(to_pool(priority), std::forward<F>(task));
    } else {
      (void)priority;
      base::detach_task(std::forward<F>(task));
    }
  }

  template <class F>
  [[nodiscard]] auto submit_task(F&& task, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_task(to_pool(priority), std::forward<F>(task));
    } else {
      (void)priority;
      return base::submit_task(std::forward<F>(task));
    }
  }

  template <std::integral A, std::integral B, class F>
  void detach_loop(A first, B last, F&& loop, std::size_t blocks = 0, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::detach_loop(to_pool(priority), first, last, std::forward<F>(loop), blocks);
    } else {
      (void)priority;
      return base::detach_loop(first, last, std::forward<F>(loop), blocks);
    }
  }
  template <std::integral A, std::integral B, class F>
  [[nodiscard]] auto submit_loop(A first, B last, F&& loop, std::size_t blocks = 0, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_loop(to_pool(priority), first, last, std::forward<F>(loop), blocks);
    } else {
      (void)priority;
      return base::submit_loop(first, last, std::forward<F>(loop), blocks);
    }
  }
  template <std::integral A, std::integral B, class F>
  void detach_blocks(A first, B last, F&& block, std::size_t blocks = 0, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::detach_blocks(to_pool(priority), first, last, std::forward<F>(block), blocks);
    } else {
      (void)priority;
      return base::detach_blocks(first, last, std::forward<F>(block), blocks);
    }
  }
  template <std::integral A, std::integral B, class F>
  [[nodiscard]] auto submit_blocks(A first, B last, F&& block, std::size_t blocks = 0,
                                   priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_blocks(to_pool(priority), first, last, std::forward<F>(block), blocks);
    } else {
      (void)priority;
      return base::submit_blocks(first, last, std::forward<F>(block), blocks);
    }
  }
  template <std::integral A, std::integral B, class F>
  void detach_sequence(A first, B last, F&& sequence, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::detach_sequence(to_pool(priority), first, last, std::forward<F>(sequence));
    } else {
      (void)priority;
      return base::detach_sequence(first, last, std::forward<F>(sequence));
    }
  }
  template <std::integral A, std::integral B, class F>
  [[nodiscard]] auto submit_sequence(A first, B last, F&& sequence, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_sequence(to_pool(priority), first, last, std::forward<F>(sequence));
    } else {
      (void)priority;
      return base::submit_sequence(first, last, std::forward<F>(sequence));
    }
  }

  template <std::input_iterator I>
  void detach_bulk(I first, I last, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::detach_bulk(to_pool(priority), first, last);
    } else {
      (void)priority;
      return base::detach_bulk(first, last);
    }
  }
  template <std::ranges::input_range C>
  void detach_bulk(C& container, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::detach_bulk(to_pool(priority), container);
    } else {
      (void)priority;
      return base::detach_bulk(container);
    }
  }
  template <std::input_iterator I>
  [[nodiscard]] auto submit_bulk(I first, I last, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_bulk(to_pool(priority), first, last);
    } else {
      (void)priority;
      return base::submit_bulk(first, last);
    }
  }
  template <std::ranges::input_range C>
  [[nodiscard]] auto submit_bulk(C& container, priority_t priority = 0) {
    if constexpr (priority_enabled) {
      return base::submit_bulk(to_pool(priority), container);
    } else {
      (void)priority;
      return base::submit_bulk(container);
    }
  }

  /// BS's purge() returns nothing; the pool's returns the count, which BS code ignores.
  void purge() { (void)base::purge(); }

 private:
  static pools::futures::priority_t to_pool(priority_t p) noexcept { return pools::futures::priority_t{p}; }
};

using light_thread_pool = thread_pool<tp::none>;
using priority_thread_pool = thread_pool<tp::priority>;
using pause_thread_pool = thread_pool<tp::pause>;
using wdc_thread_pool = thread_pool<tp::wait_deadlock_checks>;

}  // namespace BS
