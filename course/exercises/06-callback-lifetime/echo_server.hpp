// SPDX-License-Identifier: MIT
// echo_server.hpp — exercise 06-callback-lifetime: the server that owns the sessions. Given; do not
// edit. Your code is session.hpp.
//
// It keeps every session it started in a map, by id, and kick(id) throws one out: stop() closes
// its socket, and erasing the map's shared_ptr drops the server's ownership. If that was the last
// owner, the session is destroyed right there — while its read is still pending in the io_context,
// whose handler will run later. Whether that handler then finds a live session is session.hpp's
// business: the server cannot know what handlers are pending, and should not have to.
// Used from one thread, the one that runs the io_context (as every handler is).
//
// The sessions are made by std::allocate_shared with an allocator that counts them (construct and
// destroy of the session itself), so the check sees how many sessions are alive without asking
// session.hpp: echo_server::sessions_alive().
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <session.hpp>  // <>, not "": the copy of session.hpp being built (the start's or a solution's)
#include <utility>

namespace exercise {

namespace detail {
inline std::size_t sessions_alive = 0;  // one thread: see the file comment

// std::allocator, except that it counts the objects it constructs and destroys. allocate_shared
// constructs and destroys the session through it (rebound to the type it needs).
template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>& /*other*/) noexcept {}
  T* allocate(std::size_t n) { return std::allocator<T>{}.allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>{}.deallocate(p, n); }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    ++sessions_alive;
  }
  template <class U>
  void destroy(U* p) {
    p->~U();
    --sessions_alive;
  }
  template <class U>
  bool operator==(const counting_allocator<U>& /*other*/) const noexcept {
    return true;
  }
};
}  // namespace detail

class echo_server {
 public:
  /// Starts a session on `socket` (one end of a connection); returns its id.
  int add(socket_type socket) {
    auto s = std::allocate_shared<session>(detail::counting_allocator<session>{}, std::move(socket));
    s->start();  // after make_shared: start() may call shared_from_this()
    sessions_.emplace(next_id_, std::move(s));
    return next_id_++;
  }

  /// Closes session `id` and forgets it (an idle client kicked out). Its pending handlers run
  /// later, with operation_aborted.
  void kick(int id) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    it->second->stop();
    sessions_.erase(it);
  }

  /// Bytes session `id` has echoed; 0 for a kicked or unknown session.
  std::size_t echoed(int id) const {
    const auto it = sessions_.find(id);
    return it == sessions_.end() ? 0 : it->second->echoed();
  }

  std::size_t size() const noexcept { return sessions_.size(); }

  /// Sessions alive right now, in this whole program, as the allocator that made them counts.
  static std::size_t sessions_alive() noexcept { return detail::sessions_alive; }

 private:
  std::map<int, std::shared_ptr<session>> sessions_;
  int next_id_ = 0;
};

}  // namespace exercise
