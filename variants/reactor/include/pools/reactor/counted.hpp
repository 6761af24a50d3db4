// SPDX-License-Identifier: MIT
// pools/reactor/counted.hpp — count the live objects of a type.
//
//   class session : public pools::reactor::connection<session>, public pools::reactor::counted<session>
//   {...}; pools::reactor::counted<session>::live()   // sessions alive right now
//
// In callback code an object's life is decided by which handlers still own it, which is easy
// to get wrong in both directions: too short is a use-after-free, too long (a shared_ptr cycle)
// is a leak that no crash will ever show. A live count that must return to zero once the work
// is done turns a leak into a failing check; AddressSanitizer catches the use-after-free. The
// server driver (server/drivers/reactor.cpp) counts its sessions with counted<session>, on a
// session derived from the server core's callback_session rather than connection<>, and reports
// the count in GET /stats as pool.sessions_alive; the e2e suite
// (server/tests/e2e/hostile_tests.cpp) checks that it falls back to the one session still open
// after 100 connections have been reset by the peer.
#pragma once

#include <atomic>
#include <cstdint>

namespace pools::reactor {

template <class T>
class counted {
 public:
  /// Objects of T constructed and not yet destroyed (relaxed: a gauge, not a synchronisation).
  static std::int64_t live() noexcept { return live_.load(std::memory_order_relaxed); }

 protected:
  counted& operator=(const counted&) noexcept = default;
  ~counted() { live_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  // Private, and T a friend: only T can construct a counted<T>, so `class a : counted<b>` (a
  // copy-paste slip that would count a's objects as b's) does not compile.
  friend T;
  counted() noexcept { live_.fetch_add(1, std::memory_order_relaxed); }
  counted(const counted&) noexcept { live_.fetch_add(1, std::memory_order_relaxed); }

  static inline std::atomic<std::int64_t> live_{0};
};

}  // namespace pools::reactor
