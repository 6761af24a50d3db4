// SPDX-License-Identifier: MIT
// src/poller.hpp on Linux: epoll and an eventfd (the default build on Linux).
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "poller.hpp"

namespace pools::reactor::detail {

// The public API speaks poll()'s bits; epoll's have the same values on Linux.
static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLERR == POLLERR && EPOLLHUP == POLLHUP &&
              EPOLLPRI == POLLPRI);

namespace {
// A system call failed if it returned -1; errno says why, the exception names the call.
int checked(int result, const char* call) {
  if (result < 0) throw std::system_error(errno, std::system_category(), call);
  return result;
}
}  // namespace

struct poller::impl {
  // epoll: the kernel watches many fds at once and wakes this thread when one is ready. The set
  // lives in the kernel, and epoll_ctl may come from any thread: add() and remove() take effect
  // at once, even while the loop sleeps in epoll_wait.
  int epoll = checked(::epoll_create1(EPOLL_CLOEXEC), "epoll_create1");
  // eventfd: a counter the kernel treats as an fd. A thread blocked in epoll_wait sleeps in the
  // kernel, where no mutex or condition variable reaches it; but a write to this fd makes it
  // readable, and epoll_wait returns. The count persists: a write made *before* the loop went to
  // sleep still wakes it, so a wake-up is never lost.
  int wake = -1;

  impl() {
    try {
      wake = checked(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), "eventfd");
      // Level-triggered (no EPOLLET), like every fd here: readable until read() takes the count.
      epoll_event ev{.events = EPOLLIN, .data = {.fd = wake}};
      checked(::epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &ev), "epoll_ctl");
    } catch (...) {
      if (wake >= 0) ::close(wake);
      ::close(epoll);
      throw;
    }
  }
  ~impl() {
    ::close(wake);
    ::close(epoll);
  }
};

poller::poller() : impl_(std::make_unique<impl>()) {}
poller::~poller() = default;

void poller::add(int fd, std::uint32_t events) {
  epoll_event ev{.events = events, .data = {.fd = fd}};
  checked(::epoll_ctl(impl_->epoll, EPOLL_CTL_ADD, fd, &ev), "epoll_ctl");
}

void poller::remove(int fd) {
  checked(::epoll_ctl(impl_->epoll, EPOLL_CTL_DEL, fd, nullptr), "epoll_ctl");
}

void poller::wake() {
  checked(::eventfd_write(impl_->wake, 1), "eventfd_write");  // count += 1
}

poller::ready poller::wait(int timeout_ms) {
  // One ready fd per wake-up. (A busy server asks for dozens at once, to save system calls; but
  // then a callback may unwatch and close an fd whose event is still in the batch, and the loop
  // must learn to skip it. One at a time, an unwatched fd is never reported again.)
  epoll_event ev{.events = 0, .data = {.fd = -1}};  // fd -1: timed out, nothing is ready
  const int n = ::epoll_wait(impl_->epoll, &ev, 1, timeout_ms);
  // EINTR: a signal handler ran on this thread, nothing is ready. Any other error is a bug.
  if (n < 0 && errno != EINTR) checked(n, "epoll_wait");
  if (n <= 0) return {-1, 0};
  if (ev.data.fd == impl_->wake) {
    eventfd_t count;  // only a wake-up: take the count (back to 0), so the fd is not ready
    checked(::eventfd_read(impl_->wake, &count), "eventfd_read");
    return {-1, 0};
  }
  return {ev.data.fd, ev.events};
}

}  // namespace pools::reactor::detail
