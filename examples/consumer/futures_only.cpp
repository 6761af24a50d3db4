// SPDX-License-Identifier: MIT
// The futures pool alone: header-only, so this program links no library of pools and no
// third-party one (examples/consumer/check-consumer.sh reads its link line). Exit 0 when the
// answers are right.
#include <pools/futures/thread_pool.hpp>

#include <cstdio>
#include <future>
#include <thread>

int main() {
  // 0 threads: one worker per hardware thread, as in every pool of the project.
  pools::futures::thread_pool pool(0);
  std::future<int> product = pool.submit_task([](int a, int b) { return a * b; }, 6, 7);
  // The sum of 0..999 in blocks; main waits for them, a worker never does.
  auto parts = pool.submit_blocks(0L, 1000L, [](long begin, long end) {
    long s = 0;
    for (long i = begin; i < end; ++i) s += i;
    return s;
  });
  const int p = product.get();
  long s = 0;
  for (long part : parts.get()) s += part;
  std::printf("6 * 7 = %d, 0 + ... + 999 = %ld, on %zu workers\n", p, s, pool.get_thread_count());
  return p == 42 && s == 499500 && pool.get_thread_count() >= 1 ? 0 : 1;
}
