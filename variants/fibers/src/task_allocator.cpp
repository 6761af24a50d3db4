// SPDX-License-Identifier: MIT
// src/task_allocator.cpp — per-thread free lists for task objects (see task_allocator.hpp).
#include <pools/fibers/detail/task_allocator.hpp>

#include <cstdint>
#include <new>
#include <utility>

namespace pools::fibers::detail {

#if defined(POOLS_ASAN)

void* allocate_task(std::size_t bytes) {
  return ::operator new(bytes);
}
void deallocate_task(void* p, std::size_t) noexcept {
  ::operator delete(p);
}

#else

namespace {

constexpr std::size_t granule = 64;
constexpr std::size_t classes = 4;  // 64, 128, 192, 256 bytes
constexpr std::uint32_t cap = 1024;

struct free_block {
  free_block* next;
};

// thread_local, not per worker: frees also happen on threads that are not workers (a joiner in
// main() drops the last reference). Plain TLS is safe here although fibers migrate, because
// these functions are out of line and never hold the list across a suspension.
struct cache {
  free_block* head[classes] = {};
  std::uint32_t count[classes] = {};
  ~cache() {
    for (auto* h : head) {
      while (h != nullptr) ::operator delete(std::exchange(h, h->next));
    }
  }
};
thread_local cache tls;

std::size_t class_of(std::size_t bytes) noexcept {
  return (bytes - 1) / granule;
}

}  // namespace

void* allocate_task(std::size_t bytes) {
  const std::size_t c = class_of(bytes);
  if (c >= classes) return ::operator new(bytes);
  if (free_block* b = tls.head[c]) {
    tls.head[c] = b->next;
    --tls.count[c];
    return b;
  }
  return ::operator new((c + 1) * granule);
}

void deallocate_task(void* p, std::size_t bytes) noexcept {
  const std::size_t c = class_of(bytes);
  if (c >= classes || tls.count[c] >= cap) {
    ::operator delete(p);
    return;
  }
  auto* b = static_cast<free_block*>(p);
  b->next = tls.head[c];
  tls.head[c] = b;
  ++tls.count[c];
}

#endif

}  // namespace pools::fibers::detail
