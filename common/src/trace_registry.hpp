// SPDX-License-Identifier: MIT
// The per-thread rings behind pools/trace.hpp: written by trace.cpp, read by trace_export.cpp.
#pragma once

#include <pools/trace.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace pools::trace::detail {

struct ring {
  std::unique_ptr<record[]> records;        // ring_capacity records; slot = count % ring_capacity
  std::atomic<std::uint64_t> head{0};       // records written so far (only the owner thread writes)
  std::uint16_t track = 0;                  // index in the registry
  std::uint64_t pool = 0;                   // name_worker(): the pool this thread works for (0: none)
  unsigned index = 0;                       // ... and its index there
  std::uint64_t named_ns = 0;               // when name_worker() was called
  std::atomic<std::uint64_t> exited_ns{0};  // when the thread ended (0: still running)
  std::uint64_t head_at_mark = 0;           // `head` when mark() was last called
  std::string name;                         // the track's name in the export
};

struct registry {
  std::mutex mutex;  // guards `rings` (a new thread's first event appends)
  std::vector<std::unique_ptr<ring>> rings;
  std::atomic<std::uint64_t> mark_ns{0};  // mark(): export events from here on
};

registry& the_registry() noexcept;

}  // namespace pools::trace::detail
