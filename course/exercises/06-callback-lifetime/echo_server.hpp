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
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <session.hpp>  // <>, not "": the copy of session.hpp being built (the start's or a solution's)
#include <utility>

namespace exercise {

class echo_server {
 public:
  /// Starts a session on `socket` (one end of a connection); returns its id.
  int add(socket_type socket) {
    auto s = std::make_shared<session>(std::move(socket));
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

 private:
  std::map<int, std::shared_ptr<session>> sessions_;
  int next_id_ = 0;
};

}  // namespace exercise
