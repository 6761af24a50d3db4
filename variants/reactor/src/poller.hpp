// SPDX-License-Identifier: MIT
// src/poller.hpp — what the textbook reactor's loop sleeps in: "wake me when one of these fds is
// ready, when somebody calls wake(), or after `timeout` ms". One seam, two implementations, one
// chosen at build time (variants/reactor/CMakeLists.txt):
//   poller_epoll.cpp  Linux: epoll (the kernel keeps the watched set) and an eventfd to wake it.
//   poller_poll.cpp   POSIX only (POOLS_PORTABLE, and every system but Linux): poll() over a set
//                     the poller keeps itself, and a pipe to wake it (the "self-pipe trick").
// The loop (textbook_pool.cpp) is the same over both. Event bits are poll()'s (POLLIN, POLLOUT,
// POLLERR, POLLHUP), which on Linux have the same values as EPOLLIN, EPOLLOUT, ...
#pragma once

#include <cstdint>
#include <memory>

namespace pools::reactor::detail {

class poller {
 public:
  poller();  // std::system_error naming the call if the kernel refuses (out of fds, ...)
  ~poller();
  poller(const poller&) = delete;
  poller& operator=(const poller&) = delete;

  /// Watches fd for `events`, level-triggered; from any thread, at once (also while the loop
  /// sleeps in wait()). A bad fd, a regular file or an fd already watched -> std::system_error
  /// (EBADF, EPERM, EEXIST) naming the call.
  void add(int fd, std::uint32_t events);
  /// Stops watching fd (not watched -> std::system_error, ENOENT). From another thread, the loop
  /// may still report it once from a wait() already under way.
  void remove(int fd);
  /// Makes the loop's current or next wait() return. A wake made before the loop sleeps is kept,
  /// so none is lost. From any thread.
  void wake();

  struct ready {
    int fd;                // -1: woken, timed out or interrupted; nothing to call
    std::uint32_t events;  // what fd is ready for (POLLIN, ...)
  };
  /// The loop thread only: sleeps until an fd is ready, wake() was called, or `timeout_ms` passed
  /// (-1: no limit; 0: only looks). Reports one ready fd at a time.
  ready wait(int timeout_ms);

 private:
  struct impl;  // the epoll fd and eventfd, or the pipe and the watched set
  std::unique_ptr<impl> impl_;
};

}  // namespace pools::reactor::detail
