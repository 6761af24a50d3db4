// SPDX-License-Identifier: MIT
// Export (pools/trace_export.hpp): the rings of pools/trace.hpp as Chrome Trace Event JSON.
//
// Tasks and parks are recorded as begin/end pairs and written as complete slices ("X") once both
// ends are in the rings; an end whose begin was overwritten (or left out by mark()) is dropped, as
// is a begin whose end never came. Flow arrows ("s" → "f", Trace Event format v1) must start
// inside a slice: a post or wake that happened outside any task (the main thread submitting, a
// worker's loop) gets a 2 ns slice of its own to carry the arrow. The arrow's head binds to the
// park the woken worker is in ("bp": "e"), or else to the next slice on the target track (a
// thief's stolen task, which starts right after the steal).
#include <pools/trace_export.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <fstream>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "trace_registry.hpp"

namespace pools::trace {
namespace {

using json = nlohmann::json;

// `arg` of a task or park begin that happened before mark() and is re-dated to it.
constexpr std::uint32_t carried = 1;

const char* name_of(event e) {
  switch (e) {
    case event::task_begin:
    case event::task_end:
      return "task";
    case event::post:
      return "post";
    case event::steal:
      return "steal";
    case event::park_begin:
    case event::park_end:
      return "park";
    case event::wake:
      return "wake";
    case event::fiber_suspend:
      return "fiber suspend";
    case event::fiber_resume:
      return "fiber resume";
    case event::fiber_migrate:
      return "fiber migrate";
    case event::coroutine_resume:
      return "coroutine resume";
    case event::io_completion:
      return "io completion";
    case event::conn_accepted:
    case event::conn_closed:
      return "connection";
    case event::request_begin:
    case event::request_end:
      return "request";
    case event::queue_depth:
      return "queue depth";
  }
  return "?";
}

struct slice {
  std::uint64_t begin, end;
};

struct out_event {
  std::uint32_t tid;
  double ts;
  double dur;  // for ordering: a longer slice first at equal ts (the parent before its child)
  json body;
};

class exporter {
 public:
  explicit exporter(detail::registry& reg) {
    std::lock_guard lock(reg.mutex);
    const std::uint64_t mark = reg.mark_ns.load(std::memory_order_relaxed);
    for (const auto& r : reg.rings) {
      // acquire: pairs with the owner's release; the owner has stopped (see the header).
      const std::uint64_t head = r->head.load(std::memory_order_acquire);
      recorded_ += head - r->head_at_mark;
      const std::uint64_t first = head > ring_capacity ? head - ring_capacity : 0;
      std::vector<record> recs;
      std::vector<record> open;  // begins before the window whose end is not: carried into it
      recs.reserve(head - first);
      for (std::uint64_t i = first; i < head; ++i) {
        const record& rec = r->records[i & (ring_capacity - 1)];
        if (rec.ns >= mark) {
          recs.push_back(rec);
        } else if (rec.what == event::task_begin || rec.what == event::park_begin) {
          open.push_back(rec);
        } else if ((rec.what == event::task_end || rec.what == event::park_end) && !open.empty()) {
          open.pop_back();
        }
      }
      // Wrapped, and the oldest record kept is already inside the window: some were lost.
      if (first > 0 && !recs.empty() && recs.size() == head - first) ++truncated_;
      // A worker asleep (or in a task) as the window opens shows so from its first instant.
      for (record& o : open) {
        o.ns = mark;
        o.arg = carried;  // its post, if any, is before the window: not counted as a task run
      }
      recs.insert(recs.begin(), open.begin(), open.end());
      carried_ += open.size();
      // A worker alive in the window keeps its track even if it recorded nothing there (it was
      // idle: that is worth seeing); one that had ended before the window is left out.
      const std::uint64_t exited = r->exited_ns.load(std::memory_order_relaxed);
      const bool idle_worker = r->pool != 0 && (exited == 0 || exited >= mark);
      tracks_.push_back({r->name, r->pool, r->index, r->named_ns, std::move(recs), {}, idle_worker});
    }
    set_t0();
  }

  explicit exporter(const std::vector<recorded_track>& given) {
    for (const auto& g : given) {
      recorded_ += g.records.size();
      tracks_.push_back({g.name, 0, 0, 0, g.records, {}, true});
      for (record& r : tracks_.back().recs) r.track = static_cast<std::uint16_t>(tracks_.size() - 1);
    }
    set_t0();
  }

  summary run(std::ostream& out) {
    summary s;
    s.truncated_tracks = truncated_;
    s.recorded = recorded_;
    for (std::uint32_t t = 0; t < tracks_.size(); ++t) slices_and_instants(t, s);
    s.events -= carried_;  // the begins carried over the mark were recorded before it
    async_slices();
    flows(s);
    sleep_with_work(s);
    write(out);
    return s;
  }

 private:
  struct track {
    std::string name;
    std::uint64_t pool;
    unsigned index;
    std::uint64_t named_ns;
    std::vector<record> recs;
    std::vector<slice> slices;  // by begin, after slices_and_instants()
    bool shown_empty = false;   // exported even without records (a worker idle in the window)
  };

  void set_t0() {
    t0_ = ~std::uint64_t{0};
    for (const auto& t : tracks_)
      if (!t.recs.empty()) t0_ = std::min(t0_, t.recs.front().ns);
  }

  double us(std::uint64_t ns) const { return static_cast<double>(ns - t0_) / 1000.0; }

  void add(std::uint32_t tid, std::uint64_t ns, double dur, json body) {
    body["ts"] = us(ns);
    body["pid"] = 1;
    body["tid"] = tid;
    events_.push_back({tid, us(ns), dur, std::move(body)});
  }

  void add_slice(std::uint32_t tid, const char* name, std::uint64_t b, std::uint64_t e, json args) {
    const double dur = static_cast<double>(e - b) / 1000.0;
    add(tid, b, dur, {{"ph", "X"}, {"name", name}, {"cat", name}, {"dur", dur}, {"args", std::move(args)}});
    tracks_[tid].slices.push_back({b, e});
  }

  void slices_and_instants(std::uint32_t tid, summary& s) {
    track& t = tracks_[tid];
    track_summary ts;
    ts.name = t.name;
    ts.worker = t.pool != 0;
    std::vector<record> tasks, parks;  // open begins (a stack each)
    for (const record& r : t.recs) {
      ++s.events;
      switch (r.what) {
        case event::task_begin:
          tasks.push_back(r);
          break;
        case event::park_begin:
          parks.push_back(r);
          break;
        case event::task_end:
          if (!tasks.empty()) {
            const record b = tasks.back();
            tasks.pop_back();
            json args = {{"id", fmt::format("{:#x}", b.id)}};
            if (b.arg == carried) args["carried"] = true;  // began before the window
            add_slice(tid, "task", b.ns, r.ns, std::move(args));
          }
          break;
        case event::park_end:
          if (!parks.empty()) {
            const record b = parks.back();
            parks.pop_back();
            add_slice(tid, "park", b.ns, r.ns, json::object());
            ts.asleep_ns += static_cast<double>(r.ns - b.ns);
          }
          break;
        case event::conn_accepted:
        case event::request_begin:
        case event::conn_closed:
        case event::request_end:
          async_.push_back({tid, r});  // paired in time order over all tracks: async_slices()
          break;
        case event::queue_depth:
          add(tid, r.ns, 0, {{"ph", "C"}, {"name", "queue depth"}, {"args", {{"items", r.arg}}}});
          break;
        default: {
          json args = {{"id", fmt::format("{:#x}", r.id)}};
          if (r.what == event::steal) args["victim"] = r.arg;
          if (r.what == event::wake) {
            if (r.arg == any_worker) {
              args["woken"] = "any (a condition variable's notify)";
            } else {
              args["woken"] = r.arg;
            }
          }
          if (r.what == event::fiber_migrate) args["from"] = r.arg;
          if (r.what == event::post) args["from_worker"] = r.from_worker;
          if (r.what == event::post && r.arg == 1) args["continuation"] = true;
          add(tid, r.ns, 0, {{"ph", "i"}, {"s", "t"}, {"name", name_of(r.what)}, {"args", std::move(args)}});
        }
      }
      if ((r.what == event::task_begin && r.arg != carried) || r.what == event::coroutine_resume) ++ts.tasks;
      if (r.what == event::post) ++ts.posts;
      if (r.what == event::steal) ++ts.steals;
      if (r.what == event::park_begin) ++ts.parks;
      if (r.what == event::wake) ++ts.wakes;
    }
    std::sort(t.slices.begin(), t.slices.end(),
              [](const slice& a, const slice& b) { return a.begin < b.begin; });
    s.tracks.push_back(std::move(ts));
  }

  /// A connection or a request begins on one thread and may end on another: its ends are paired
  /// in time order over all tracks, each end with the oldest open begin of the same object (a
  /// connection answers its requests in order).
  void async_slices() {
    std::stable_sort(async_.begin(), async_.end(),
                     [](const auto& a, const auto& b) { return a.second.ns < b.second.ns; });
    std::map<std::pair<event, std::uint64_t>, std::deque<std::pair<std::uint32_t, std::uint64_t>>> open;
    for (const auto& [tid, r] : async_) {
      if (r.what == event::conn_accepted || r.what == event::request_begin) {
        open[{r.what, r.id}].push_back({tid, r.ns});
        continue;
      }
      const event opener = r.what == event::conn_closed ? event::conn_accepted : event::request_begin;
      auto it = open.find({opener, r.id});
      if (it == open.end() || it->second.empty()) continue;  // its begin is before the window
      const auto [btid, bns] = it->second.front();
      it->second.pop_front();
      const std::string id = fmt::format("{}", ++async_ids_);
      const json args = {{"id", fmt::format("{:#x}", r.id)}};
      add(btid, bns, 0,
          {{"ph", "b"}, {"name", name_of(r.what)}, {"cat", "server"}, {"id", id}, {"args", args}});
      add(tid, r.ns, 0, {{"ph", "e"}, {"name", name_of(r.what)}, {"cat", "server"}, {"id", id}});
    }
  }

  /// A slice of track `tid` that contains `ns` strictly inside, or nullptr.
  const slice* enclosing(std::uint32_t tid, std::uint64_t ns) const {
    const auto& sl = tracks_[tid].slices;
    auto it = std::upper_bound(sl.begin(), sl.end(), ns,
                               [](std::uint64_t v, const slice& x) { return v < x.begin; });
    // Walk back over a few earlier slices: a parent slice begins before its children.
    for (int k = 0; k < 8 && it != sl.begin(); ++k) {
      --it;
      if (it->begin < ns && ns < it->end) return &*it;
    }
    return nullptr;
  }

  /// The first slice of track `tid` that begins after `ns`, or nullptr.
  const slice* next_after(std::uint32_t tid, std::uint64_t ns) const {
    const auto& sl = tracks_[tid].slices;
    auto it = std::upper_bound(sl.begin(), sl.end(), ns,
                               [](std::uint64_t v, const slice& x) { return v < x.begin; });
    return it == sl.end() ? nullptr : &*it;
  }

  /// The flow's tail: inside a slice of `tid` at `ns`, making a 2 ns one if there is none.
  void flow_start(std::uint32_t tid, std::uint64_t ns, const char* name, std::uint64_t id) {
    if (enclosing(tid, ns) == nullptr) {
      const double dur = 0.002;
      add(tid, ns > t0_ ? ns - 1 : ns, dur,
          {{"ph", "X"}, {"name", name}, {"cat", name}, {"dur", dur}, {"args", json::object()}});
    }
    add(tid, ns, -1, {{"ph", "s"}, {"name", name}, {"cat", name}, {"id", id}});
  }

  void flows(summary& s) {
    // Where each item was posted, by id, in time order (ids are addresses: they repeat), and
    // whether it was a parent's continuation (a post's arg 1: a work-first fork).
    std::unordered_map<std::uint64_t, std::vector<std::tuple<std::uint64_t, std::uint32_t, bool>>> posts;
    // The tracks of each (pool, worker index), for wakes.
    std::map<std::pair<std::uint64_t, unsigned>, std::vector<std::pair<std::uint64_t, std::uint32_t>>>
        workers;
    for (std::uint32_t t = 0; t < tracks_.size(); ++t) {
      for (const record& r : tracks_[t].recs)
        if (r.what == event::post) posts[r.id].push_back({r.ns, t, r.arg == 1});
      if (tracks_[t].pool != 0)
        workers[{tracks_[t].pool, tracks_[t].index}].push_back({tracks_[t].named_ns, t});
    }
    for (auto& [id, v] : posts) std::sort(v.begin(), v.end());
    std::uint64_t next_id = 0;
    for (std::uint32_t t = 0; t < tracks_.size(); ++t) {
      for (const record& r : tracks_[t].recs) {
        if (r.what == event::steal) {
          auto it = posts.find(r.id);
          if (it == posts.end()) continue;
          auto p = std::upper_bound(it->second.begin(), it->second.end(),
                                    std::tuple{r.ns, ~std::uint32_t{0}, true});
          if (p == it->second.begin()) continue;
          --p;
          const auto [posted_ns, posted_tid, continuation] = *p;
          ++(continuation ? s.stolen_continuations : s.stolen_tasks);
          const slice* target = next_after(t, r.ns);
          if (target == nullptr) continue;
          const std::uint64_t id = ++next_id;
          flow_start(posted_tid, posted_ns, "steal", id);
          add(t, std::min(r.ns, target->begin - 1), -1,
              {{"ph", "f"}, {"name", "steal"}, {"cat", "steal"}, {"id", id}});
          ++s.flows;
        } else if (r.what == event::wake) {
          auto w = workers.find({r.pool, r.arg});
          if (w == workers.end()) continue;
          std::uint32_t target_tid = w->second.front().second;
          for (const auto& [named, tid] : w->second)
            if (named <= r.ns) target_tid = tid;
          json head = {{"ph", "f"}, {"name", "wake"}, {"cat", "wake"}};
          std::uint64_t at = r.ns;
          if (enclosing(target_tid, r.ns) != nullptr) {
            head["bp"] = "e";  // the woken worker's park
          } else if (const slice* next = next_after(target_tid, r.ns)) {
            at = std::min(r.ns, next->begin - 1);
          } else {
            continue;
          }
          const std::uint64_t id = ++next_id;
          flow_start(t, r.ns, "wake", id);
          head["id"] = id;
          add(target_tid, at, -1, std::move(head));
          ++s.flows;
        }
      }
    }
  }

  /// Time each worker spent parked while its pool had items queued: posts not yet taken, swept
  /// over all tracks in time order. (An estimate at the edges of the rings: a post older than the
  /// oldest record is not seen.)
  void sleep_with_work(summary& s) {
    struct point {
      std::uint64_t ns;
      std::uint32_t tid;
      event what;
      std::uint64_t pool;
    };
    std::vector<point> all;
    for (std::uint32_t t = 0; t < tracks_.size(); ++t)
      for (const record& r : tracks_[t].recs) all.push_back({r.ns, t, r.what, r.pool});
    std::stable_sort(all.begin(), all.end(), [](const point& a, const point& b) { return a.ns < b.ns; });
    std::map<std::uint64_t, std::int64_t> queued;
    std::vector<bool> parked(tracks_.size(), false);
    std::uint64_t last = all.empty() ? 0 : all.front().ns;
    for (const point& p : all) {
      for (std::uint32_t t = 0; t < tracks_.size(); ++t)
        if (parked[t] && queued[tracks_[t].pool] > 0)
          s.tracks[t].asleep_with_work_ns += static_cast<double>(p.ns - last);
      last = p.ns;
      switch (p.what) {
        case event::post:
          ++queued[p.pool];
          break;
        case event::task_begin:
        case event::coroutine_resume:
          if (queued[p.pool] > 0) --queued[p.pool];
          break;
        case event::park_begin:
          parked[p.tid] = true;
          break;
        case event::park_end:
          parked[p.tid] = false;
          break;
        default:
          break;
      }
    }
    for (const auto& t : s.tracks) {
      s.total.tasks += t.tasks;
      s.total.posts += t.posts;
      s.total.steals += t.steals;
      s.total.parks += t.parks;
      s.total.wakes += t.wakes;
      s.total.asleep_ns += t.asleep_ns;
      s.total.asleep_with_work_ns += t.asleep_with_work_ns;
    }
    s.total.name = "all";
  }

  void write(std::ostream& out) {
    std::stable_sort(events_.begin(), events_.end(), [](const out_event& a, const out_event& b) {
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.ts != b.ts) return a.ts < b.ts;
      return a.dur > b.dur;
    });
    // otherData (free-form in the format): whether the counts in the file are whole, for checkers.
    out << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
        << json{{"recorded", recorded_}, {"truncated_tracks", truncated_}}.dump() << ",\"traceEvents\":[\n";
    out << json{{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", "pools"}}}}.dump();
    for (std::uint32_t t = 0; t < tracks_.size(); ++t) {
      if (tracks_[t].recs.empty() && !tracks_[t].shown_empty) continue;
      out << ",\n"
          << json{{"ph", "M"},
                  {"name", "thread_name"},
                  {"pid", 1},
                  {"tid", t},
                  {"args", {{"name", tracks_[t].name}}}}
                 .dump();
      out << ",\n"
          << json{{"ph", "M"},
                  {"name", "thread_sort_index"},
                  {"pid", 1},
                  {"tid", t},
                  {"args", {{"sort_index", t}}}}
                 .dump();
    }
    for (const auto& e : events_) out << ",\n" << e.body.dump();
    out << "\n]}\n";
  }

  std::vector<track> tracks_;
  std::uint64_t t0_ = 0;
  std::vector<out_event> events_;
  std::vector<std::pair<std::uint32_t, record>> async_;  // connection and request events
  std::uint64_t async_ids_ = 0;
  std::uint64_t truncated_ = 0;
  std::uint64_t recorded_ = 0;
  std::uint64_t carried_ = 0;  // begins from before the mark, re-dated to it
};

}  // namespace

namespace {
summary write_with(const std::string& path, exporter& ex) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write the trace file '{}'", path));
  summary s = ex.run(out);
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("writing the trace file '{}' failed", path));
  return s;
}
}  // namespace

summary write_chrome_json(const std::string& path) {
  exporter ex(detail::the_registry());
  return write_with(path, ex);
}

summary write_chrome_json(const std::string& path, const std::vector<recorded_track>& tracks) {
  exporter ex(tracks);
  return write_with(path, ex);
}

void print_summary(const summary& s, std::FILE* out) {
  fmt::print(out, "trace: {} events recorded, {} of them exported (still in the rings), {} flow arrows\n",
             s.recorded, s.events, s.flows);
  if (s.truncated_tracks != 0)
    fmt::print(out,
               "trace: {} thread(s) overwrote older events (ring of {} records each): counts are partial\n",
               s.truncated_tracks, ring_capacity);
  fmt::print(out, "{:<30} {:>9} {:>9} {:>7} {:>7} {:>7} {:>12} {:>22}\n", "track", "tasks", "posts", "steals",
             "parks", "wakes", "asleep ms", "mean asleep w/ work us");
  const auto row = [&](const track_summary& t) {
    const double mean = t.parks != 0 ? t.asleep_with_work_ns / static_cast<double>(t.parks) / 1000.0 : 0.0;
    fmt::print(out, "{:<30} {:>9} {:>9} {:>7} {:>7} {:>7} {:>12.3f} {:>22.2f}\n", t.name, t.tasks, t.posts,
               t.steals, t.parks, t.wakes, t.asleep_ns / 1e6, mean);
  };
  for (const auto& t : s.tracks)
    if (t.worker || t.tasks + t.posts + t.steals + t.parks + t.wakes != 0) row(t);
  row(s.total);
  // Work-first (fork_scope) pushes parents' continuations, help-first (when_all) children: what
  // the thieves took, by the kind of the post each steal matched.
  fmt::print(out, "trace: stolen items: {} tasks or children, {} continuations ({} steals unmatched)\n",
             s.stolen_tasks, s.stolen_continuations,
             s.total.steals - std::min(s.total.steals, s.stolen_tasks + s.stolen_continuations));
}

}  // namespace pools::trace
