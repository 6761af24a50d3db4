// SPDX-License-Identifier: MIT
// pools/reactor/connection_registry.hpp — find every open connection at shutdown, own none.
//
// A graceful stop drains: executor::stop() waits until no work is left, and an idle keep-alive
// connection *is* work (its pending read). So before stop() a server closes what it has open:
//
//   registry.add(conn);           // when a connection starts
//   ...
//   acceptor.close();             // no new connections (on the acceptor's executor)
//   registry.close_all();         // each live connection's close() runs on its own executor
//   ex.stop();                    // now the drain can finish
//
// The registry holds std::weak_ptr only. Holding shared_ptrs would keep every connection alive
// until shutdown (a leak in all but name, and a cycle if a connection can reach the registry);
// weak entries expire by themselves when a connection ends and are pruned as the registry grows.
// T needs get_executor() and close(); close() must be idempotent (the connection may be closing
// on its own at the same moment).
#pragma once

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace pools::reactor {

template <class T>
class connection_registry {
 public:
  /// Remembers c without owning it. After close_all(), c is closed as soon as it is added (an
  /// accept that raced with the shutdown must not leave a connection holding the drain open).
  void add(const std::shared_ptr<T>& c) {
    {
      std::lock_guard lock(mutex_);
      if (!closing_) {
        if (entries_.size() >= prune_at_) prune_locked();
        entries_.push_back(c);
        return;
      }
    }
    request_close(c);
  }

  /// Connections added and still alive.
  std::size_t size() {
    std::lock_guard lock(mutex_);
    prune_locked();
    return entries_.size();
  }

  /// Asks every live connection, and every one added from now on, to close: c->close() is
  /// posted to c's executor, so it runs serialised with c's other handlers. Does not wait.
  void close_all() {
    std::vector<std::weak_ptr<T>> entries;
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      entries.swap(entries_);
    }
    for (const auto& weak : entries) {
      if (auto c = weak.lock()) request_close(c);
    }
  }

 private:
  static void request_close(const std::shared_ptr<T>& c) {
    boost::asio::post(c->get_executor(), [c] { c->close(); });
  }

  // Amortised O(1) per add: prune when the vector has doubled since the last prune.
  void prune_locked() {
    std::erase_if(entries_, [](const std::weak_ptr<T>& w) { return w.expired(); });
    prune_at_ = std::max<std::size_t>(64, 2 * entries_.size());
  }

  std::mutex mutex_;
  std::vector<std::weak_ptr<T>> entries_;
  std::size_t prune_at_ = 64;
  bool closing_ = false;
};

}  // namespace pools::reactor
