// SPDX-License-Identifier: MIT
// src/poller.hpp with POSIX alone (POOLS_PORTABLE, and every system but Linux): poll() and a pipe.
//
// poll() takes the whole set of fds on every call and the kernel forgets it on return, so the
// set lives here, under a mutex (add() and remove() come from any thread), and the loop copies it
// before each sleep. An fd added while the loop sleeps is not in the copy it sleeps on: add()
// wakes the loop, which copies the set again. Waking is the self-pipe trick: poll() watches the
// read end of a pipe, and wake() writes a byte into it. Bytes persist like eventfd's count, so a
// wake made before the loop sleeps is not lost. Cost against epoll: O(watched fds) per wait, and
// a wake-up per add(); a textbook loop watches a few fds.
//
// Memory: the loop's wait() must not allocate. Out of memory there, std::bad_alloc would have
// nobody to reach but std::terminate. So add(), on the caller's thread, also makes room for
// the loop's next copy (`spare`), and wait() swaps that in when its own copy is too small.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

#include "poller.hpp"

namespace pools::reactor::detail {

namespace {
// A system call failed if it returned -1; errno says why, the exception names the call.
int checked(int result, const char* call) {
  if (result < 0) throw std::system_error(errno, std::system_category(), call);
  return result;
}
[[noreturn]] void fail(int error, const char* call) {
  throw std::system_error(error, std::system_category(), call);
}
}  // namespace

struct poller::impl {
  int pipe_read = -1, pipe_write = -1;  // the self-pipe: both ends non-blocking, close-on-exec
  std::mutex m;                         // guards `watched` and `spare`
  std::map<int, short> watched;         // fd -> events (ordered: the same order on every poll)
  std::vector<pollfd> spare;            // guarded by m: room for watched.size() + 1 (add() grows it)
  std::vector<pollfd> fds;              // the loop thread's copy, [0] = the pipe
  std::size_t next = 0;                 // where the next search for a ready fd starts (fairness)

  impl() {
    fds.reserve(1);  // the pipe; on the constructing thread, which can take std::bad_alloc
    int p[2];
    checked(::pipe(p), "pipe");  // pipe2() with flags is not POSIX before 2024: fcntl instead
    pipe_read = p[0];
    pipe_write = p[1];
    try {
      for (const int fd : p) {
        checked(::fcntl(fd, F_SETFL, checked(::fcntl(fd, F_GETFL), "fcntl") | O_NONBLOCK), "fcntl");
        checked(::fcntl(fd, F_SETFD, FD_CLOEXEC), "fcntl");
      }
    } catch (...) {
      ::close(pipe_read);
      ::close(pipe_write);
      throw;
    }
  }
  ~impl() {
    ::close(pipe_read);
    ::close(pipe_write);
  }
};

poller::poller() : impl_(std::make_unique<impl>()) {}
poller::~poller() = default;

void poller::add(int fd, std::uint32_t events) {
  // The same refusals as epoll_ctl, so both builds keep one contract: an fd that is not open,
  // and a regular file, which poll() would report ready on every call (epoll refuses it: EPERM).
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) fail(EBADF, "poll watch (fstat)");
  if (S_ISREG(st.st_mode)) fail(EPERM, "poll watch (a regular file)");
  {
    std::lock_guard lock(impl_->m);
    // Both allocations here, before anything changed, so std::bad_alloc leaves the set as it was.
    // Room for the loop's copy first: the pipe, the fds watched now, and fd.
    if (impl_->spare.capacity() < impl_->watched.size() + 2) impl_->spare.reserve(impl_->watched.size() + 2);
    if (!impl_->watched.emplace(fd, static_cast<short>(events)).second) fail(EEXIST, "poll watch");
  }
  wake();  // the loop may be asleep on a copy of the set without fd
}

void poller::remove(int fd) {
  // No wake: a sleeping loop may report fd once more, which its caller skips (as with epoll).
  std::lock_guard lock(impl_->m);
  if (impl_->watched.erase(fd) == 0) fail(ENOENT, "poll unwatch");
}

void poller::wake() {
  const char byte = 1;
  // EAGAIN: the pipe is full, so it is readable already; the wake is not lost.
  if (::write(impl_->pipe_write, &byte, 1) < 0 && errno != EAGAIN) checked(-1, "write (wake pipe)");
}

poller::ready poller::wait(int timeout_ms) {
  auto& fds = impl_->fds;
  {
    std::lock_guard lock(impl_->m);
    // No allocation: if our copy has too little room, add() has made enough in `spare`.
    if (fds.capacity() < impl_->watched.size() + 1) fds.swap(impl_->spare);
    fds.assign(1, pollfd{impl_->pipe_read, POLLIN, 0});
    for (const auto& [fd, events] : impl_->watched) fds.push_back(pollfd{fd, events, 0});
  }
  const int n = ::poll(fds.data(), static_cast<nfds_t>(fds.size()), timeout_ms);
  // EINTR: a signal handler ran on this thread, nothing is ready. Any other error is a bug.
  if (n < 0 && errno != EINTR) checked(n, "poll");
  if (n <= 0) return {-1, 0};
  if (fds[0].revents != 0) {
    char drain[64];  // only wake-ups: empty the pipe, so it is not ready next time
    while (::read(impl_->pipe_read, drain, sizeof drain) > 0) {
    }
  }
  // One ready fd per wait, like the epoll loop; the search starts after the last one reported,
  // so one always-ready fd cannot starve the others (poll() reports them all, in set order).
  const std::size_t count = fds.size() - 1;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = 1 + (impl_->next + k) % count;
    if (fds[i].revents == 0) continue;
    std::lock_guard lock(impl_->m);
    if (impl_->watched.count(fds[i].fd) == 0) continue;  // removed while we slept: skip it
    impl_->next = i;                                     // i - 1 + 1: the one after it
    return {fds[i].fd, static_cast<std::uint32_t>(static_cast<unsigned short>(fds[i].revents))};
  }
  return {-1, 0};
}

}  // namespace pools::reactor::detail
