// SPDX-License-Identifier: MIT
// pools/trace_export.hpp — the recorded events (pools/trace.hpp) as a Chrome Trace Event JSON
// file, which Perfetto UI (https://ui.perfetto.dev) and chrome://tracing open, plus a summary.
//
// In the file: one track per thread that recorded something ("coroutines worker 0", "thread 2"
// for an unnamed thread outside any pool), and per pool worker alive in the window even if it
// recorded nothing (idle: worth seeing); a task or park open when mark() was called starts at
// the mark; a slice "task" per task a worker ran and "park" per sleep;
// instants for posts, steals, wakes, fiber and coroutine events; flow arrows from the task that
// posted an item to the thief's task that stole it ("steal") and from the waker to the woken
// worker ("wake"); async slices "connection" and "request" for the server; a counter track
// "queue depth" where a pool reports the depth of its shared queue.
//
// Call it once the traced threads have stopped (pool destroyed, server shut down): the rings are
// read without synchronisation with their writers.
#pragma once

#include <pools/trace.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace pools::trace {

struct track_summary {
  std::string name;
  bool worker = false;             // a pool's worker (listed even when it did nothing)
  std::uint64_t tasks = 0;         // task slices plus direct coroutine transfers: items this thread ran
  std::uint64_t posts = 0;         // items it queued
  std::uint64_t steals = 0;        // items it stole
  std::uint64_t parks = 0;         // times it slept
  std::uint64_t wakes = 0;         // wake-ups it issued
  double asleep_ns = 0;            // total time parked
  double asleep_with_work_ns = 0;  // ... while its pool had items queued (posts not yet run)
};

struct summary {
  std::vector<track_summary> tracks;       // in track order
  std::uint64_t recorded = 0;              // records written since mark(), overwritten ones included
  std::uint64_t events = 0;                // records exported
  std::uint64_t flows = 0;                 // arrows drawn (steals and wakes with both ends in slices)
  std::uint64_t stolen_tasks = 0;          // steals whose post was a task or a child
  std::uint64_t stolen_continuations = 0;  // ... a parent's continuation (work-first fork)
  std::uint64_t truncated_tracks = 0;      // rings that overwrote events after mark(): counts are short
  track_summary total;                     // the sums ("all")
};

/// Writes the events recorded since the last mark() to `path`; throws std::runtime_error when the
/// file cannot be written.
summary write_chrome_json(const std::string& path);

/// One track's records, made by a program rather than recorded into the rings: the simulator
/// (pools/sim/) draws each simulated task as a track, its records dated in virtual time.
struct recorded_track {
  std::string name;
  std::vector<record> records;  // in time order
};

/// Writes `tracks` (not the rings) to `path`, the same way; throws std::runtime_error when the
/// file cannot be written.
summary write_chrome_json(const std::string& path, const std::vector<recorded_track>& tracks);

/// The summary as a small table: tasks per worker, steals, parks, mean time asleep with work
/// queued.
void print_summary(const summary& s, std::FILE* out);

}  // namespace pools::trace
