// SPDX-License-Identifier: MIT
// The slow paths of pools/coroutines/frame_stack.hpp: frames on the heap, a new segment, a release
// that crosses a segment or frees an abandoned stack's last frame, the abandonment itself, and
// the misuse check.
#include <pools/coroutines/frame_allocator.hpp>
#include <pools/coroutines/frame_stack.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <new>

#if defined(POOLS_ASAN)
#include <sanitizer/asan_interface.h>
#define POOLS_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define POOLS_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POOLS_POISON(p, n) ((void)(p), (void)(n))
#define POOLS_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace pools::coroutines {
namespace detail {

constinit stack_of_frames no_stack{};
constinit stack_of_frames heap_marker{};
constinit thread_local frame_stack_local tl_frame_stack{&no_stack, nullptr, 0, false, {}};

namespace {

// Process-wide counts; relaxed: statistics, touched only when a stack or segment is made or freed.
std::atomic<std::uint64_t> stacks_created{0};
std::atomic<std::uint64_t> stacks_deleted{0};
std::atomic<std::uint64_t> segments_created{0};

frame_segment* new_segment(std::size_t bytes) {
  auto* seg = static_cast<frame_segment*>(::operator new(bytes));
  seg->prev = nullptr;
  seg->next = nullptr;
  seg->prev_top = nullptr;
  seg->end = reinterpret_cast<char*>(seg) + bytes;
  POOLS_POISON(seg->data(), static_cast<std::size_t>(seg->end - seg->data()));
  segments_created.fetch_add(1, std::memory_order_relaxed);
  return seg;
}

std::size_t segment_bytes(const frame_segment* seg) noexcept {
  return static_cast<std::size_t>(seg->end - reinterpret_cast<const char*>(seg));
}

// A segment's first frame address and its limit (stack_of_frames: top and limit).
char* first_frame(frame_segment* seg) noexcept {
  return seg->data() + frame_stack::header_size;
}
char* limit_of(frame_segment* seg) noexcept {
  return seg->end + frame_stack::header_size;
}

void reset(stack_of_frames& s) noexcept {
  s.abandoned = false;
  s.current = s.first;
  s.base = first_frame(s.first);
  s.top = s.base;
  s.limit = limit_of(s.first);
}

stack_of_frames* new_stack() {
  frame_segment* first = new_segment(frame_stack::first_segment);
  auto* s = new (std::nothrow) stack_of_frames{};
  if (s == nullptr) {
    ::operator delete(first);
    throw std::bad_alloc();
  }
  s->first = first;
  s->next_cached = nullptr;
  reset(*s);
  stacks_created.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void delete_stack(stack_of_frames* s) noexcept {
  for (frame_segment* seg = s->first; seg != nullptr;) {
    frame_segment* next = seg->next;
    POOLS_UNPOISON(seg->data(), static_cast<std::size_t>(seg->end - seg->data()));
    ::operator delete(seg);
    seg = next;
  }
  delete s;
  stacks_deleted.fetch_add(1, std::memory_order_relaxed);
}

// Steps down over segments left empty at the top (a release that emptied a segment leaves `top`
// at its start; the next allocation may use it again, or the next release steps down here).
void step_down(stack_of_frames& s) noexcept {
  while (s.top == first_frame(s.current) && s.current->prev != nullptr) {
    s.top = s.current->prev_top;
    s.current = s.current->prev;
    s.limit = limit_of(s.current);
  }
}

bool empty_after_step_down(stack_of_frames& s) noexcept {
  step_down(s);
  return s.top == s.base;
}

// An empty stack whose owner is gone: to this thread's cache if it is a worker with room, else
// freed.
void recycle(frame_stack_local& local, stack_of_frames* s) noexcept {
  reset(*s);
  if (local.attached && local.cached < frame_stack::cache_limit) {
    s->next_cached = local.cache;
    local.cache = s;
    ++local.cached;
  } else {
    delete_stack(s);
  }
}

stack_of_frames* take_stack(frame_stack_local& local) {
  if (stack_of_frames* s = local.cache) {
    local.cache = s->next_cached;
    --local.cached;
    return s;
  }
  return new_stack();
}

void* bump(stack_of_frames& s, std::size_t n) noexcept {
  char* frame = s.top;
  s.top = frame + n;
  POOLS_UNPOISON(frame - frame_stack::header_size, n);
  *reinterpret_cast<char***>(frame - frame_stack::header_size) = &s.top;
  return frame;
}

// Tags the bottom frame of a stack given up with frames on it: the first frame of the lowest
// segment holding any (a segment below the current one is empty when a frame too big for it went
// on to the next). Its release, the stack's last, then takes the slow path and recycles the stack.
void mark_bottom(stack_of_frames& s) noexcept {
  frame_segment* seg = s.first;
  while (seg != s.current && seg->next->prev_top == first_frame(seg)) seg = seg->next;
  *reinterpret_cast<char***>(seg->data()) = &s.never;  // the header of the segment's first frame
  s.abandoned = true;
}

[[noreturn]] void misuse(const char* what) noexcept {
  std::fprintf(stderr, "pools::coroutines::frame_stack: %s\n", what);
  std::fflush(stderr);
  std::terminate();
}

}  // namespace

void* frame_stack_allocate_slow(std::size_t size) {
  frame_stack_local& local = tl_frame_stack;
  stack_of_frames* s = local.current;
  const std::size_t n = frame_bytes(size);
  if (s == &no_stack) {
    // Not a worker: a frame from the heap, marked so for its release.
    char* p = static_cast<char*>(frame_allocator::allocate(n));
    *reinterpret_cast<char***>(p) = &heap_marker.top;
    ++local.stats.heap_frames;
    return p + frame_stack::header_size;
  }
  if (n <= static_cast<std::size_t>(s->limit - s->top)) return bump(*s, n);  // (the ASan build)
  // The current segment is full: go on in the next one, kept from earlier growth when it is big
  // enough, else a new one twice the size (or as big as the frame needs), linked in after this.
  frame_segment* cur = s->current;
  frame_segment* next = cur->next;
  if (next == nullptr || static_cast<std::size_t>(limit_of(next) - first_frame(next)) < n) {
    const std::size_t bytes = std::max(2 * segment_bytes(cur), sizeof(frame_segment) + n);
    frame_segment* grown = new_segment(bytes);
    grown->next = next;
    if (next != nullptr) next->prev = grown;
    grown->prev = cur;
    cur->next = grown;
    next = grown;
  }
  next->prev_top = s->top;
  s->current = next;
  s->top = first_frame(next);
  s->limit = limit_of(next);
  return bump(*s, n);
}

void frame_stack_release_slow(void* frame, std::size_t size) noexcept {
  char* const f = static_cast<char*>(frame);
  char** const target = *reinterpret_cast<char***>(f - frame_stack::header_size);
  const std::size_t n = frame_bytes(size);
  if (target == &heap_marker.top) {
    frame_allocator::release(f - frame_stack::header_size, n);
    return;
  }
  const auto word = reinterpret_cast<std::uintptr_t>(target);
  const bool bottom = word % alignof(stack_of_frames) == never_offset;
  auto* s = reinterpret_cast<stack_of_frames*>(bottom ? word - never_offset : word);
  frame_stack_local& local = tl_frame_stack;
  // Only the stack's worker pushes on it while it is its current stack, and frees from it then;
  // any other thread frees only from a stack given up (frame_stack.hpp). Anything else is a
  // stack_task's frame whose creator kept the stack across a suspension without giving it up: a
  // race on the worker's top that the fast path (one compare) cannot see. Every release comes here
  // under AddressSanitizer, so the sanitized tests check each one.
  if (s != local.current && !s->abandoned)
    misuse(
        "a frame was released on a thread whose current stack it is not, and its stack was never given "
        "up: a stack_task was created outside a stack_task's body and kept across a suspension (create a "
        "stack_task only in a stack_task's body, or as sync_wait's argument; see stack_task.hpp)");
  if (f + n != s->top) {
    // Not at the top of the current segment: the frame may end the segment below an emptied one.
    step_down(*s);
    if (f + n != s->top)
      misuse(
          "a frame was released that is not the top of its stack (stack_task frames must be destroyed in "
          "the reverse order of their creation; see stack_task.hpp)");
  }
  s->top = f;
  POOLS_POISON(f - frame_stack::header_size, n);
  if (bottom) {
    // The last frame of an abandoned stack: nobody owns it any more. (A program cannot reach the
    // message below: releasing the bottom frame first fails the top check above. It guards
    // mark_bottom's choice of the bottom frame.)
    if (!empty_after_step_down(*s))
      misuse("the bottom frame of an abandoned stack was released before the others");
    ++local.stats.recycled;
    recycle(local, s);
  }
}

void frame_stack_abandon(frame_stack_local& local) noexcept {
  stack_of_frames* s = local.current;
  if (empty_after_step_down(*s)) return;
  mark_bottom(*s);
  ++local.stats.abandoned;
  // A new stack may need memory. Without it this worker takes its frames from the heap from now
  // on (no_stack), which keeps every rule: it touches no stack at all.
  try {
    local.current = take_stack(local);
  } catch (const std::bad_alloc&) {
    local.current = &no_stack;
  }
}

}  // namespace detail

void frame_stack::attach_this_thread() noexcept {
  detail::frame_stack_local& local = detail::tl_frame_stack;
  if (local.current != &detail::no_stack) return;
  local.attached = true;
  try {
    local.current = detail::take_stack(local);
  } catch (const std::bad_alloc&) {
    // No memory for a stack: this thread's frames come from the heap, as on any other thread.
  }
}

void frame_stack::detach_this_thread() noexcept {
  detail::frame_stack_local& local = detail::tl_frame_stack;
  if (detail::stack_of_frames* s = local.current; s != &detail::no_stack) {
    // Empty: every stack_task that put frames on it either finished or gave the stack up when it
    // left its strand (frame_stack.hpp, cases a to c), and a worker stops only between work items.
    // Frames still here belong to a stack_task created outside a stack_task's body by a coroutine
    // that suspended holding it and never finished: a misuse, and freeing the stack would leave
    // them dangling.
    if (!detail::empty_after_step_down(*s))
      detail::misuse(
          "a worker stopped with frames on its stack: a stack_task was created outside a stack_task's "
          "body and kept across a suspension that never ended (see stack_task.hpp)");
    detail::delete_stack(s);
    local.current = &detail::no_stack;
  }
  while (detail::stack_of_frames* s = local.cache) {
    local.cache = s->next_cached;
    detail::delete_stack(s);
  }
  local.cached = 0;
  local.attached = false;
}

frame_stack::stats frame_stack::this_thread_stats() noexcept {
  return detail::tl_frame_stack.stats;
}

bool frame_stack::this_thread_has_stack() noexcept {
  return detail::tl_frame_stack.current != &detail::no_stack;
}

frame_stack::totals frame_stack::process_totals() noexcept {
  return {detail::stacks_created.load(std::memory_order_relaxed),
          detail::stacks_deleted.load(std::memory_order_relaxed),
          detail::segments_created.load(std::memory_order_relaxed)};
}

}  // namespace pools::coroutines
