// SPDX-License-Identifier: MIT
#include <pools/reactor/strategy.hpp>

namespace pools::reactor {

std::string_view to_string(strategy s) noexcept {
  switch (s) {
    case strategy::per_thread:
      return "per_thread";
    case strategy::shared:
      return "shared";
  }
  return "unknown";
}

std::optional<strategy> parse_strategy(std::string_view name) noexcept {
  if (name == "per_thread") return strategy::per_thread;
  if (name == "shared") return strategy::shared;
  return std::nullopt;
}

}  // namespace pools::reactor
