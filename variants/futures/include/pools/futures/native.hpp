// SPDX-License-Identifier: MIT
// pools/futures/native.hpp — what the operating system offers per thread and per process that
// std::thread does not: names, CPU affinity, scheduling priority (BS::thread_pool's "native
// extensions"). Linux only, outside the portable build (the seam of pools/thread_name.hpp:
// POOLS_PORTABLE or another system leaves these functions out, and
// pools::futures::native::available is false).
//
//   pools::futures::thread_pool pool(4, [](std::size_t i) {
//     pools::futures::native::set_os_thread_name("worker-" + std::to_string(i));
//     pools::futures::native::set_os_thread_affinity(one_cpu(i));   // std::vector<bool>
//   });
//
// Every function acts on the *calling* thread (or process) and reports failure instead of
// throwing: a name longer than 15 bytes, a CPU set the process may not use, or a priority above
// normal without the privilege (CAP_SYS_NICE) all return false. An init function is where a
// pool's workers call them; pool.get_native_handles() gives the pthread_t of each worker for
// anything else.
#pragma once

#if defined(__linux__) && !defined(POOLS_PORTABLE)

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace pools::futures::native {

inline constexpr bool available = true;

// ---- names -----------------------------------------------------------------------------------

/// Names the calling thread (top -H, gdb, perf). Linux allows 15 bytes; a longer name fails.
inline bool set_os_thread_name(const std::string& name) {
  return pthread_setname_np(pthread_self(), name.c_str()) == 0;
}

/// The calling thread's name.
inline std::optional<std::string> get_os_thread_name() {
  std::array<char, 16> buffer{};  // the kernel's limit, 15 bytes and the terminator
  if (pthread_getname_np(pthread_self(), buffer.data(), buffer.size()) != 0) return std::nullopt;
  return std::string(buffer.data());
}

// ---- affinity: element i is CPU i --------------------------------------------------------------

namespace detail {
// One element per CPU the system has configured (online or not), so that the vector's indices are
// CPU numbers and a round trip through set/get gives back the same vector.
inline std::size_t cpu_count() noexcept {
  const int n = get_nprocs_conf();
  return n > 0 ? static_cast<std::size_t>(n) : 1;
}
inline std::vector<bool> to_vector(const cpu_set_t& set) {
  std::vector<bool> cpus(std::min<std::size_t>(cpu_count(), CPU_SETSIZE));
  for (std::size_t i = 0; i < cpus.size(); ++i) cpus[i] = CPU_ISSET(i, &set) != 0;
  return cpus;
}
inline cpu_set_t to_set(const std::vector<bool>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (std::size_t i = 0; i < cpus.size() && i < CPU_SETSIZE; ++i) {
    if (cpus[i]) CPU_SET(i, &set);
  }
  return set;
}
}  // namespace detail

/// The CPUs the calling thread may run on.
inline std::optional<std::vector<bool>> get_os_thread_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return std::nullopt;
  return detail::to_vector(set);
}

/// Restricts the calling thread to the CPUs marked true. Fails (false) for an empty set or CPUs
/// outside the process's own affinity.
inline bool set_os_thread_affinity(const std::vector<bool>& cpus) {
  const cpu_set_t set = detail::to_set(cpus);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/// The CPUs the process's main thread may run on (Linux keeps affinity per thread; a thread
/// inherits its creator's when it starts).
inline std::optional<std::vector<bool>> get_os_process_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(getpid(), sizeof set, &set) != 0) return std::nullopt;
  return detail::to_vector(set);
}

/// Sets the affinity of the process's main thread (and so of the threads it starts later).
inline bool set_os_process_affinity(const std::vector<bool>& cpus) {
  const cpu_set_t set = detail::to_set(cpus);
  return sched_setaffinity(getpid(), sizeof set, &set) == 0;
}

// ---- priorities --------------------------------------------------------------------------------

/// Process priorities, as nice values of the process's main thread (lower is more urgent).
enum class os_process_priority : int {
  idle = 19,
  below_normal = 10,
  normal = 0,
  above_normal = -10,
  high = -15,
  realtime = -20
};

/// The main thread's nice value as one of the named levels; empty for any other value.
inline std::optional<os_process_priority> get_os_process_priority() {
  errno = 0;  // getpriority() may legitimately return -1
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
  if (nice == -1 && errno != 0) return std::nullopt;
  for (const auto p :
       {os_process_priority::idle, os_process_priority::below_normal, os_process_priority::normal,
        os_process_priority::above_normal, os_process_priority::high, os_process_priority::realtime}) {
    if (static_cast<int>(p) == nice) return p;
  }
  return std::nullopt;
}

/// Sets the main thread's nice value. Without CAP_SYS_NICE, only lowering the priority works.
inline bool set_os_process_priority(os_process_priority priority) {
  return setpriority(PRIO_PROCESS, static_cast<id_t>(getpid()), static_cast<int>(priority)) == 0;
}

/// Thread priorities, lowest to highest; a thread's level is a scheduling policy plus a value:
///   idle          SCHED_IDLE (runs only when nothing else wants the CPU)
///   lowest        SCHED_OTHER, nice 19
///   below_normal  SCHED_OTHER, nice 10
///   normal        SCHED_OTHER, nice 0
///   above_normal  SCHED_OTHER, nice -10          (needs CAP_SYS_NICE)
///   highest       SCHED_RR, the lowest real-time priority     (needs CAP_SYS_NICE)
///   realtime      SCHED_FIFO, the highest real-time priority  (needs CAP_SYS_NICE)
/// The enumerators are ordered, so `p <= os_thread_priority::normal` reads as expected.
enum class os_thread_priority : int { idle, lowest, below_normal, normal, above_normal, highest, realtime };

namespace detail {
inline pid_t own_tid() noexcept {
  return gettid();
}
inline int nice_of(os_thread_priority p) noexcept {
  switch (p) {
    case os_thread_priority::lowest:
      return 19;
    case os_thread_priority::below_normal:
      return 10;
    case os_thread_priority::above_normal:
      return -10;
    default:
      return 0;
  }
}
}  // namespace detail

/// The calling thread's level; empty when its policy and value are none of the seven above.
inline std::optional<os_thread_priority> get_os_thread_priority() {
  int policy = 0;
  sched_param param{};
  if (pthread_getschedparam(pthread_self(), &policy, &param) != 0) return std::nullopt;
  if (policy == SCHED_IDLE) return os_thread_priority::idle;
  if (policy == SCHED_FIFO && param.sched_priority == sched_get_priority_max(SCHED_FIFO))
    return os_thread_priority::realtime;
  if (policy == SCHED_RR && param.sched_priority == sched_get_priority_min(SCHED_RR))
    return os_thread_priority::highest;
  if (policy != SCHED_OTHER) return std::nullopt;
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(detail::own_tid()));  // Linux: per thread
  if (nice == -1 && errno != 0) return std::nullopt;
  for (const auto p : {os_thread_priority::lowest, os_thread_priority::below_normal,
                       os_thread_priority::normal, os_thread_priority::above_normal}) {
    if (detail::nice_of(p) == nice) return p;
  }
  return std::nullopt;
}

/// Sets the calling thread's level (policy first, then the nice value for the SCHED_OTHER ones).
inline bool set_os_thread_priority(os_thread_priority priority) {
  sched_param param{};
  int policy = SCHED_OTHER;
  if (priority == os_thread_priority::idle) {
    policy = SCHED_IDLE;
  } else if (priority == os_thread_priority::highest) {
    policy = SCHED_RR;
    param.sched_priority = sched_get_priority_min(SCHED_RR);
  } else if (priority == os_thread_priority::realtime) {
    policy = SCHED_FIFO;
    param.sched_priority = sched_get_priority_max(SCHED_FIFO);
  }
  if (pthread_setschedparam(pthread_self(), policy, &param) != 0) return false;
  if (policy != SCHED_OTHER) return true;
  return setpriority(PRIO_PROCESS, static_cast<id_t>(detail::own_tid()), detail::nice_of(priority)) == 0;
}

}  // namespace pools::futures::native

#else

namespace pools::futures::native {
inline constexpr bool available = false;
}  // namespace pools::futures::native

#endif
