// SPDX-License-Identifier: MIT
// Must not compile: each POOLS_MISUSE value is one use of a stack_task that would break its stack
// discipline (stack_task.hpp). The ctest entries (CMakeLists.txt, <variant>_stack_task_refused_*)
// build it and pass only when the compiler's output holds the static_assert's message.
#include <pools/coroutines/fork_scope.hpp>
#include <pools/coroutines/stack_task.hpp>
#include <pools/coroutines/thread_pool.hpp>

namespace pc = pools::coroutines;

pc::stack_task<int> leaf() {
  co_return 1;
}

#if POOLS_MISUSE == 1
// Detached onto the pool.
void misuse(pc::thread_pool& pool) {
  pool.spawn(leaf());
}
#elif POOLS_MISUSE == 2
// Awaited by a task<T>, which may hold it across a suspension that does not give the stack up.
pc::task<int> misuse() {
  co_return co_await leaf();
}
#elif POOLS_MISUSE == 3
// Forked by a task<T>.
pc::task<int> misuse() {
  pc::stack_task<int> a = leaf();
  pc::fork_scope scope;
  co_await scope.fork(a);
  co_await scope.join();
  co_return co_await std::move(a);
}
#endif

int main() {
  return 0;
}
