// SPDX-License-Identifier: MIT
// pools/detail/linked_stop_source.hpp — a stop source that also stops when a parent token does.
//
// when_all (on a failure), when_any (on the first result) and with_timeout (on the deadline) stop
// their own children without stopping their parent's other work: their children run under a
// source of their own. A stop requested from above must still reach them, so the source is
// linked: a std::stop_callback on the parent's token requests stop on it. Not movable: the
// callback points at the source. Used by the coroutines and the fibers variants.
#pragma once

#include <stop_token>

namespace pools::detail {

class linked_stop_source {
 public:
  /// `parent` may be null or unstoppable: the source then stops only when asked to.
  explicit linked_stop_source(const std::stop_token* parent)
      : token_(source_.get_token()),
        link_(parent != nullptr ? *parent : std::stop_token{}, forward{&source_}) {}
  linked_stop_source(const linked_stop_source&) = delete;
  linked_stop_source& operator=(const linked_stop_source&) = delete;

  std::stop_source& source() noexcept { return source_; }
  /// The token the children run under; lives as long as this object.
  const std::stop_token& token() const noexcept { return token_; }
  bool request_stop() noexcept { return source_.request_stop(); }

 private:
  struct forward {
    std::stop_source* to;
    void operator()() const noexcept { to->request_stop(); }
  };
  std::stop_source source_;
  std::stop_token token_;
  std::stop_callback<forward> link_;  // declared last: deregistered first, before source_ goes
};

}  // namespace pools::detail
