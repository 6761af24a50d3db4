// SPDX-License-Identifier: MIT
// Two pools in one program: a coroutine fork-join (pools::coroutines) and a submitted task with a
// std::future (pools::futures). Exit 0 when both answers are right.
#include <pools/coroutines/coroutines.hpp>
#include <pools/futures/thread_pool.hpp>

#include <cstdint>
#include <cstdio>
#include <future>

namespace pc = pools::coroutines;

// Fork both halves, join both: each co_await suspends a frame, never a thread.
pc::task<std::uint64_t> fib(int n) {
  if (n < 2) co_return n;
  auto [a, b] = co_await pc::when_all(fib(n - 1), fib(n - 2));
  co_return a + b;
}

int main() {
  pc::thread_pool coroutine_pool(2);
  const std::uint64_t f = pc::sync_wait(coroutine_pool, fib(20));  // blocks main, not a worker

  pools::futures::thread_pool futures_pool(2);
  std::future<int> product = futures_pool.submit_task([](int a, int b) { return a * b; }, 6, 7);
  const int p = product.get();  // main waits; a worker never does

  std::printf("fib(20) = %llu, 6 * 7 = %d\n", static_cast<unsigned long long>(f), p);
  return f == 6765 && p == 42 ? 0 : 1;
}
