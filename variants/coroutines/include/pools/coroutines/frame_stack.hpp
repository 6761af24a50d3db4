// SPDX-License-Identifier: MIT
// pools/coroutines/frame_stack.hpp — coroutine frames bumped on a per-worker stack of frames, for
// stack_task (stack_task.hpp): an allocation is an add and a compare, a release a compare and a
// store, and nothing is freed on the hot path.
//
// Fork/join creates and destroys frames in LIFO order: `stack_task a = f(), b = g();` allocates a
// then b; the parent destroys its locals in reverse order, b then a, and a child's own children
// are destroyed before the child ends. So each worker keeps a stack: a frame is pushed on the
// worker's *current* stack and popped from the stack it was pushed on.
//
//     segment 0 (16 KiB)             segment 1 (32 KiB)        segments double; kept when empty
//     [h|frame][h|frame][h|frame]..  [h|frame][h|frame]  top ─►
//      h: a 16-byte header naming the frame's stack (or "heap", or "bottom of an abandoned stack":
//         detail::stack_of_frames says how one word tells the three apart)
//
//   allocate(n)   on the calling thread's current stack (a worker of a thread_pool has one, any
//                 other thread none: its frames come from frame_allocator, marked "heap" in h)
//   release(p, n) on the stack named in h; p must be its top frame, else std::terminate with a
//                 message: a release out of order is a misuse, and must not corrupt silently.
//
// Who may touch a stack. Frames are pushed on a stack only by the worker whose current stack it is,
// while that worker runs the *strand* that put frames there (the chain of coroutines it runs
// without going back to other work: a fork runs its child inline, a child finishing with its parent
// popped back runs the parent next). A frame on it can be freed on another thread only when its
// owner (the coroutine that created it) runs on another thread: its continuation was stolen, or it
// suspended and was resumed elsewhere. So whenever a worker leaves a strand that has not finished,
// it first *abandons* its current stack if that is not empty (leave_strand()): the stack now
// belongs to the frames on it, and the worker takes an empty stack from its cache (or a new one).
// The three places where a worker leaves an unfinished strand:
//   (a) a forked child finishes and its parent was taken (detail/fork_state.hpp, cases 2 and 3);
//   (b) a parent waits at a join whose children are not all back (fork_scope.hpp, join_awaiter);
//   (c) a stack_task awaits anything but another stack_task or a fork_scope's fork, call or join
//       of one: a lock, an event, a timer, schedule(), a task<T> (stack_task.hpp, await_transform).
// Each abandons *before* it publishes the strand's coroutines to other threads — before its
// acq_rel arrival at the join counter in (a) and (b), before the awaitable's await_suspend (which
// hands the coroutine to a waiter list, a timer, a queue) in (c). A thread that frees a frame of
// the abandoned stack runs that frame's owner, so it acquired that publication (the counter's
// arrival, the waiter list's lock): the worker's pushes and its abandonment happen before the
// free, and the worker never touches the stack again. The frees that remain are still LIFO, and
// ordered by happens-before among themselves (each owner frees after its children's arrivals).
// The thread that frees the last frame of an abandoned stack recycles it: into its own cache if
// it is a worker, else deletes it. A steal itself (a parent taken from the deque at a fork) needs
// no abandonment: until its join, the thief frees no frame of the parent's that lies on the
// victim's stack (the rule below), and the join is case (a) or (b) on one side or the other.
//
//       worker 1 (victim)                            worker 2 (thief)
//       S1: [fib4][a:fib3][b:fib2][fib3's kids..]
//       fib4 forks a, runs a ───────────steal────►  fib4's continuation: call(b), join
//       a finishes; fib4 gone (case a):              b's frame stays on S1; b's kids go on S2
//         abandon S1, take S3 from the cache         join: a not back (case b): abandon S2
//         arrive at the join (acq_rel) ─────────┐     if non-empty, arrive (acq_rel)
//       the last to arrive resumes fib4 ◄───────┘ and frees b, then a, from S1 (LIFO); the
//       thread that frees S1's bottom frame puts S1 in its own cache.
//
// Why a frame on a worker's current stack is freed by that worker only. The frame was pushed by the
// worker in its current strand, by a stack_task O (only a stack_task runs one, given the first rule
// below), and O frees it. Another thread runs O only if O was handed over: (1) O suspended at a
// join or another awaitable and was resumed there — the worker gave the stack up first, (b) or (c);
// or (2) O is a parent whose continuation a thief took at a fork. Then O frees nothing pushed
// before the fork until its join (the second rule below), and it passes its join only after every
// child arrived; the child that ran on this worker arrived after the worker gave the stack up (a),
// or it suspended before and the worker gave the stack up then (c). Either way the free comes after
// a give-up the freeing thread acquired. Not the worker loop, nor the pop of the next item: by the
// time a suspended coroutine's await_suspend returns, another thread may run it already, so the
// give-up belongs before the publication, where (a), (b) and (c) put it.
//
// The first rule this needs from the program (stack_task.hpp states it): create a stack_task only
// in a stack_task's body, or as sync_wait's argument. "Only a stack_task runs a strand with frames
// on a stack" holds only then: a task<T> that makes one and suspends holding it would keep the
// worker's stack without giving it up. The release's slow path terminates with a message when a
// frame's stack is neither the releasing thread's current stack nor given up
// (stack_of_frames::abandoned); under AddressSanitizer every release takes that path.
//
// The second rule (stack_task.hpp repeats it): between a fork and its join, the parent destroys no
// stack_task it created before the fork (a stolen parent would free a frame in the middle of the
// victim's live stack). Declaring the tasks before the fork_scope, as the examples do, keeps it.
//
// Under AddressSanitizer, a released frame's bytes are poisoned until they are allocated again,
// so a use after destroy is still reported.
#pragma once

#include <cstddef>  // offsetof
#include <cstdint>

namespace pools::coroutines {

struct frame_stack {
  static constexpr std::size_t header_size = 16;  // keeps frames 16-aligned, as operator new's
  static constexpr std::size_t first_segment = 16 * 1024;
  static constexpr unsigned cache_limit = 8;  // empty stacks a thread keeps for later

  static void* allocate(std::size_t size);
  static void release(void* frame, std::size_t size) noexcept;

  /// The calling worker leaves an unfinished strand: if its current stack holds frames, it gives
  /// that stack up to them and takes an empty one (see the header comment). Free when empty or
  /// when the thread has no stack.
  static void leave_strand() noexcept;

  /// Gives the calling thread a current stack (a pool's worker calls it when it starts). Without
  /// memory for one, the thread's frames come from the heap.
  static void attach_this_thread() noexcept;
  /// Gives it up again (when the worker stops): frees its stacks, which are empty then (a current
  /// stack that still holds frames is a misuse: std::terminate with a message).
  static void detach_this_thread() noexcept;

  /// The calling thread's counters since it started (for tests and the bench).
  struct stats {
    std::uint64_t heap_frames = 0;  // frames from frame_allocator (no current stack)
    std::uint64_t abandoned = 0;    // stacks this thread gave up with frames on them
    std::uint64_t recycled = 0;     // abandoned stacks whose last frame this thread freed
  };
  static stats this_thread_stats() noexcept;
  /// Whether the calling thread has a current stack (a worker of a thread_pool).
  static bool this_thread_has_stack() noexcept;

  /// Process-wide counts of stacks and segments (relaxed atomics, updated on slow paths only).
  struct totals {
    std::uint64_t stacks_created = 0;
    std::uint64_t stacks_deleted = 0;
    std::uint64_t segments_created = 0;
  };
  static totals process_totals() noexcept;
};

namespace detail {

struct frame_segment {
  frame_segment* prev;
  frame_segment* next;  // kept when empty, reused when the stack grows again
  char* prev_top;       // the previous segment's top when this one became current
  char* end;
  // The frames follow, from data() to end.
  char* data() noexcept { return reinterpret_cast<char*>(this) + sizeof(frame_segment); }
};
static_assert(sizeof(frame_segment) % frame_stack::header_size == 0);

// A stack. `top` is where the *next frame* would start, 16 bytes past the next header: the
// allocation returns it as it is and writes the header below it, and a release compares the
// frame's end with it (both one instruction less than with `top` at the header). 64-aligned, so
// that a header word pointing at `never` (offset 48) is told apart from one pointing at the stack.
struct alignas(64) stack_of_frames {
  char* top = nullptr;    // the next frame's address in the current segment
  char* limit = nullptr;  // the current segment's end + header_size: a frame fits when its end <= limit
  char* base = nullptr;   // the first frame's address in the first segment: top == base when empty
  frame_segment* current = nullptr;
  frame_segment* first = nullptr;
  stack_of_frames* next_cached = nullptr;  // in a thread's cache of empty stacks
  char* never = nullptr;                   // a top no frame ends at (see the header words below)
  // Set when its worker gives it up with frames on it (leave_strand), cleared when the last is
  // freed (recycled). Read by the release slow path only: a frame on a stack that is neither the
  // releasing thread's current one nor given up is a misuse (a stack_task created outside a
  // stack_task's body and held across a suspension; stack_task.hpp). Written before the give-up is
  // published and read after it is acquired, like the frames themselves.
  bool abandoned = false;
};
static_assert(sizeof(stack_of_frames) == 64);

// The header's word, a char** always written and read as one (no aliasing between types), read by
// release(), which compares the frame's end with the word's target:
//   &stack.top                   the frame lies on that stack (`top` is its first member, so the
//                                word is also the stack's address);
//   &stack.never                 the bottom frame of a stack given up to its frames: never equal,
//                                so its release (the stack's last) takes the slow path, which
//                                recycles the stack;
//   &heap_marker.top             a frame from the heap (a thread with no stack): null, never equal.
// One load and one compare tell all three apart on the fast path; no tag bits to test.
extern constinit stack_of_frames heap_marker;
inline constexpr std::uintptr_t never_offset = offsetof(stack_of_frames, never);
static_assert(never_offset % alignof(stack_of_frames) != 0);

// The "current stack" of a thread that has none: every pointer null, so no frame fits (the
// allocation's one bound check sends it to the slow path, which takes the heap) and it is always
// empty (leave_strand does nothing). It saves the fast path a test for "no stack".
extern constinit stack_of_frames no_stack;

// Plain data with constant initialisation, so `constinit thread_local` needs no guard on access.
struct frame_stack_local {
  stack_of_frames* current = nullptr;  // &no_stack: not a worker, frames go to the heap
  stack_of_frames* cache = nullptr;    // empty stacks
  unsigned cached = 0;
  bool attached = false;
  frame_stack::stats stats;
};

extern constinit thread_local frame_stack_local tl_frame_stack;

inline std::size_t frame_bytes(std::size_t size) noexcept {
  return frame_stack::header_size + ((size + frame_stack::header_size - 1) & ~(frame_stack::header_size - 1));
}

void* frame_stack_allocate_slow(std::size_t size);
void frame_stack_release_slow(void* frame, std::size_t size) noexcept;
void frame_stack_abandon(frame_stack_local& local) noexcept;

}  // namespace detail

inline void* frame_stack::allocate(std::size_t size) {
#if !defined(POOLS_ASAN)
  detail::stack_of_frames* s = detail::tl_frame_stack.current;
  char* const frame = s->top;
  // Compared as addresses, not as a size against limit - top: one instruction less. (A segment
  // ends far below the top of the address space, and no_stack's null + n is above its null limit.)
  const auto end = reinterpret_cast<std::uintptr_t>(frame) + detail::frame_bytes(size);
  if (end <= reinterpret_cast<std::uintptr_t>(s->limit)) [[likely]] {
    s->top = reinterpret_cast<char*>(end);
    *reinterpret_cast<char***>(frame - header_size) = &s->top;  // the header word (see detail)
    return frame;
  }
#endif
  return detail::frame_stack_allocate_slow(size);
}

inline void frame_stack::release(void* frame, std::size_t size) noexcept {
#if !defined(POOLS_ASAN)
  char* const f = static_cast<char*>(frame);
  char** const target = *reinterpret_cast<char***>(f - header_size);  // its stack's top, or a never
  if (f + detail::frame_bytes(size) == *target) [[likely]] {          // the top frame: pop it
    *target = f;
    return;
  }
#endif
  detail::frame_stack_release_slow(frame, size);
}

inline void frame_stack::leave_strand() noexcept {
  detail::frame_stack_local& local = detail::tl_frame_stack;
  detail::stack_of_frames* s = local.current;
  // Empty: the top at the start of the first segment (a later segment left empty is found in the
  // slow path), or no stack at all (no_stack). Nothing to give up then.
  if (s->top != s->base) detail::frame_stack_abandon(local);
}

}  // namespace pools::coroutines
