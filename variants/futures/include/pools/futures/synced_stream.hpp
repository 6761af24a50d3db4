// SPDX-License-Identifier: MIT
// pools/futures/synced_stream.hpp — print from many tasks without interleaving (BS::synced_stream).
//
//   pools::futures::synced_stream out;                 // std::cout
//   pool.detach_loop(0, 4, [&](int i) { out.println("task ", i, " done"); });
//
// Each print()/println() writes all its items to every stream under one mutex, so the lines of
// two tasks never mix. The mutex belongs to this object: two synced_streams over the same
// std::ostream do not exclude each other, and neither excludes plain `std::cout << ...` elsewhere.
// Nothing is flushed unless asked (pass synced_stream::flush or synced_stream::endl as an item).
#pragma once

#include <algorithm>
#include <concepts>
#include <iostream>
#include <mutex>
#include <ostream>
#include <vector>

namespace pools::futures {

class synced_stream {
 public:
  /// Prints to std::cout.
  synced_stream() : streams_{&std::cout} {}

  /// Prints to every one of `streams`, in this order.
  template <class... S>
    requires(sizeof...(S) > 0 && (std::derived_from<S, std::ostream> && ...))
  explicit synced_stream(S&... streams) : streams_{&streams...} {}

  synced_stream(const synced_stream&) = delete;
  synced_stream& operator=(const synced_stream&) = delete;

  void add_stream(std::ostream& stream) {
    const std::lock_guard lock(mutex_);
    streams_.push_back(&stream);
  }

  /// Removes every occurrence of `stream`; a stream that was not added is ignored.
  void remove_stream(std::ostream& stream) {
    const std::lock_guard lock(mutex_);
    std::erase(streams_, &stream);
  }

  /// The streams, for code that sets their format flags. Not synchronised: change them while no
  /// other thread prints.
  std::vector<std::ostream*>& get_streams() noexcept { return streams_; }

  /// Writes every item, with operator<<, to every stream, as one uninterrupted unit.
  template <class... T>
  void print(const T&... items) {
    const std::lock_guard lock(mutex_);
    for (std::ostream* stream : streams_) (*stream << ... << items);
  }

  /// As print(), followed by '\n' (not a flush: add synced_stream::flush for that).
  template <class... T>
  void println(const T&... items) {
    print(items..., '\n');
  }

  // Stream manipulators as objects, so they can be passed to print() like any item (a function
  // template such as std::endl cannot be deduced as a parameter of print()).
  static constexpr std::ostream& (&endl)(std::ostream&) = std::endl<char, std::char_traits<char>>;
  static constexpr std::ostream& (&flush)(std::ostream&) = std::flush<char, std::char_traits<char>>;

 private:
  std::mutex mutex_;
  std::vector<std::ostream*> streams_;
};

}  // namespace pools::futures
