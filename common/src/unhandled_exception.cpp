// SPDX-License-Identifier: MIT
#include <pools/unhandled_exception.hpp>

#include <fmt/core.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <utility>

namespace pools {
namespace {

void print_to_stderr(std::exception_ptr e) noexcept {
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& ex) {
    fmt::print(stderr, "pools: a posted task threw an exception: {}\n", ex.what());
  } catch (...) {
    fmt::print(stderr, "pools: a posted task threw a non-standard exception\n");
  }
}

std::atomic<unhandled_exception_handler> current_handler{&print_to_stderr};

}  // namespace

unhandled_exception_handler set_unhandled_exception_handler(unhandled_exception_handler handler) noexcept {
  return current_handler.exchange(handler != nullptr ? handler : &print_to_stderr);
}

void report_unhandled_exception(std::exception_ptr e) noexcept {
  // acquire pairs with the exchange above so a freshly installed handler is the one called.
  current_handler.load(std::memory_order_acquire)(std::move(e));
}

}  // namespace pools
