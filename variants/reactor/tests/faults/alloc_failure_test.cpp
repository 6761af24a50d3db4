// SPDX-License-Identifier: MIT
// Allocation failure, SQLite-style (pools/testing/fault_loop.hpp): post of every reactor pool,
// and the textbook pool's timers and fd watches, with their k-th allocation failing, for
// k = 1, 2, ... until they complete. The caller gets std::bad_alloc, nothing runs twice, an
// accepted callback runs, the pool still works, the destructor returns (watchdog), and nothing
// leaks (LeakSanitizer in the asan preset). The textbook pool's post fails the caller's
// allocations only (this_thread); its timer and watch also fail their loop's (any_thread): a
// timer filed, or a callback installed, by a task on the loop. There the failure goes to
// pools::report_unhandled_exception, counted here; a watch whose callback could not be
// installed is undone (the fd can be watched again, and no event of it is left to spin on). The
// Asio executors: post with the caller's allocations failing, and post, timers, cancel,
// request_stop and descriptor waits with every thread's (the last test case).
#include <doctest/doctest.h>

#include <pools/reactor/executor.hpp>
#include <pools/reactor/textbook_pool.hpp>
#include <pools/reactor/timer.hpp>
#include <pools/testing/fault_loop.hpp>
#include <pools/testing/report_counter.hpp>
#include <pools/wait_group.hpp>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <new>
#include <optional>
#include <thread>

namespace pr = pools::reactor;
namespace pt = pools::testing;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t threads = 2;
constexpr auto scope = pt::alloc_scope::this_thread;

// Waits (bounded) until done() holds.
template <class Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + pt::fault_patience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(100us);
  }
  return true;
}

// A pipe whose read end is watched: the callback takes the byte (so the fd is no longer ready)
// and counts the call.
struct pipe_pair {
  int fd[2] = {-1, -1};
  pipe_pair() { REQUIRE(::pipe(fd) == 0); }
  ~pipe_pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
  pipe_pair(const pipe_pair&) = delete;
  pipe_pair& operator=(const pipe_pair&) = delete;
  void send() const { REQUIRE(::write(fd[1], "x", 1) == 1); }
};

auto taker(int fd, std::atomic<int>& calls) {
  return [fd, &calls, owned = std::make_unique<int>(1)](std::uint32_t) {
    char c = 0;
    if (::read(fd, &c, 1) == 1) calls.fetch_add(1);
  };
}

// An operation with the k-th allocation failing, for every k: start(pool, runs) throws
// std::bad_alloc (refused: nothing runs), or is accepted, and then `expected` counted runs
// happen, each one or, instead, a loop's report of out of memory.
template <class Pool, class Start>
void check_runs_or_reports(const char* what, int expected, pt::alloc_scope start_scope, Start start) {
  pt::check_allocation_failures(what, [&](std::uint64_t k) {
    pt::report_counter reports;
    std::atomic<int> runs{0};
    bool accepted = false;
    {
      Pool pool(threads);
      {
        pt::fail_allocation armed(k, start_scope);
        try {
          start(pool, runs);
          accepted = true;
        } catch (const std::bad_alloc&) {
        }
        // Armed until the runs happened, or the loop reported what it could not do.
        if (accepted) CHECK(eventually([&] { return runs.load() + reports.out_of_memory() == expected; }));
      }
      pt::check_still_works(pool);
    }
    CHECK(reports.other() == 0);
    CHECK(runs.load() + reports.out_of_memory() == (accepted ? expected : 0));
  });
}

// watch() with the k-th allocation failing (the caller's, or with any_thread also the loop's).
// Then, with the byte sent while still armed: the callback was called once, or the watch was
// refused (std::bad_alloc to the caller, or reported by the loop) and the fd can be watched
// again, and is then called once.
void check_watch(std::uint64_t k, pt::alloc_scope watch_scope) {
  pt::report_counter reports;
  std::atomic<int> calls{0};
  pipe_pair p;
  bool refused = false;
  {
    pr::textbook_pool pool(threads);
    {
      pt::fail_allocation armed(k, watch_scope);
      try {
        pool.watch(p.fd[0], POLLIN, taker(p.fd[0], calls));
      } catch (const std::bad_alloc&) {
        refused = true;
      }
      p.send();
      // Armed until the loop has either called the callback or reported it could not install it.
      if (!refused) CHECK(eventually([&] { return calls.load() == 1 || reports.out_of_memory() == 1; }));
    }
    CHECK(reports.other() == 0);
    if (refused || reports.out_of_memory() == 1) {
      CHECK(calls.load() == 0);                            // a watch that failed never calls
      pool.watch(p.fd[0], POLLIN, taker(p.fd[0], calls));  // not EEXIST: the failed one was undone
      CHECK(eventually([&] { return calls.load() == 1; }));
    }
    CHECK(calls.load() == 1);
    pool.unwatch(p.fd[0]);
    pt::check_still_works(pool);
  }
  CHECK(calls.load() == 1);
}

}  // namespace

TEST_CASE_TEMPLATE("reactor pools: post under allocation failure", Pool, pr::textbook_pool,
                   pr::per_thread_executor, pr::shared_executor) {
  pt::check_post_allocation_failures<Pool>(threads, scope);
  pt::check_post_allocation_failures<Pool>(threads, scope, 8, 505);
}

TEST_CASE("reactor textbook_pool: a timer under allocation failure") {
  for (const auto timer_scope : {pt::alloc_scope::this_thread, pt::alloc_scope::any_thread}) {
    check_runs_or_reports<pr::textbook_pool>("post_after", 1, timer_scope, [](auto& pool, auto& runs) {
      pool.post_after(1ms, pt::counted_task{&runs});
    });
  }
}

TEST_CASE("reactor textbook_pool: watch under allocation failure") {
  pt::check_allocation_failures("watch (the caller's allocations)",
                                [](std::uint64_t k) { check_watch(k, pt::alloc_scope::this_thread); });
  pt::check_allocation_failures("watch (every thread's)",
                                [](std::uint64_t k) { check_watch(k, pt::alloc_scope::any_thread); });
}

// The Asio executors (per_thread_executor, shared_executor) with every thread's allocations
// failing (any_thread): their reactor threads allocate too — a task that posts, a timer's
// cancel, a descriptor's wait armed again from its own handler. An exception out of a handler
// leaves io_context::run(), and the reactor thread reports it (pools::report_unhandled_exception,
// counted here) and runs on; nothing may end the process, be lost, or hold the destructor.
TEST_CASE_TEMPLATE("reactor executors: every thread's allocations failing", Pool, pr::per_thread_executor,
                   pr::shared_executor) {
  constexpr auto any = pt::alloc_scope::any_thread;
  pt::check_post_allocation_failures<Pool>(threads, any);
  pt::check_post_allocation_failures<Pool>(threads, any, 8, 505);

  // A task that posts another from its reactor thread: the inner post fails there, or runs.
  check_runs_or_reports<Pool>("post from a task", 2, any, [](Pool& pool, std::atomic<int>& runs) {
    pool.post([&pool, &runs, t = pt::counted_task{&runs}]() mutable {
      t();
      pool.post(pt::counted_task{&runs});  // may throw std::bad_alloc: reported
    });
  });
  // post_after, due soon: it runs once, or post_after threw.
  check_runs_or_reports<Pool>("post_after", 1, any, [](Pool& pool, std::atomic<int>& runs) {
    (void)pr::post_after(pool, 1ms, pt::counted_task{&runs});
  });

  // post_after, due in an hour, then cancel(): the task never runs, and the destructor does not
  // wait for the hour (a cancel that throws has changed nothing: the second one, unarmed, works).
  pt::check_allocation_failures("post_after and cancel", [](std::uint64_t k) {
    std::atomic<int> runs{0};
    {
      Pool pool(threads);
      pr::timer_handle h;
      bool cancelled = false;
      {
        pt::fail_allocation armed(k, any);
        try {
          h = pr::post_after(pool, 1h, pt::counted_task{&runs});
          cancelled = h.cancel();
          CHECK(cancelled);
        } catch (const std::bad_alloc&) {
        }
      }
      if (h.pending()) CHECK(h.cancel());
      pt::check_still_works(pool);
    }  // returns at once: no timer left
    CHECK(runs.load() == 0);
  });

  // request_stop() from a task ("safe from inside a task"): per_thread posts a marker to every
  // io_context, and the drain ends when the last has run. A marker that could not be posted would
  // leave the drain begun and never ended: the destructor would wait forever (watchdog).
  pt::check_allocation_failures("request_stop from a task", [](std::uint64_t k) {
    pt::report_counter reports;
    std::atomic<int> runs{0};
    bool accepted = false;
    {
      Pool pool(threads);
      {
        pt::fail_allocation armed(k, any);
        try {
          pool.post([&pool, t = pt::counted_task{&runs}]() mutable {
            t();
            pool.request_stop();
          });
          accepted = true;
        } catch (const std::bad_alloc&) {
        }
        if (accepted) CHECK(eventually([&] { return pool.stopping() || reports.out_of_memory() == 1; }));
      }
      if (!pool.stopping()) pool.request_stop();
    }  // the drain ends: the destructor returns
    CHECK(reports.other() == 0);
    CHECK(runs.load() == (accepted ? 1 : 0));
  });

  // A pipe's read end waited on (an Asio stream_descriptor on one of the executor's io_contexts):
  // the handler reads each byte and arms the wait again, on its reactor thread. Two bytes: each
  // is taken, or the wait that would have taken it failed to arm (reported), and nothing is left
  // armed or leaked.
  pt::check_allocation_failures("descriptor waits", [](std::uint64_t k) {
    using boost::asio::posix::stream_descriptor;
    pt::report_counter reports;
    std::atomic<int> calls{0};
    pipe_pair p;
    bool armed_first = false;
    {
      Pool pool(threads);
      {
        std::optional<stream_descriptor> d;
        {
          pt::fail_allocation armed(k, any);
          try {
            const int fd = ::dup(p.fd[0]);
            REQUIRE(fd >= 0);
            try {
              d.emplace(pool.next_context(), fd);
            } catch (...) {
              ::close(fd);  // not yet the descriptor's to close
              throw;
            }
            struct reader {
              stream_descriptor* d = nullptr;
              std::atomic<int>* calls = nullptr;
              std::unique_ptr<int> owned = std::make_unique<int>(1);  // a lost handler leaks it
              void operator()(const boost::system::error_code& ec) {
                if (ec) return;  // cancelled: the descriptor is closing
                char c = 0;
                if (::read(d->native_handle(), &c, 1) == 1 && calls->fetch_add(1) == 0)
                  d->async_wait(stream_descriptor::wait_read, reader{d, calls});  // may throw: reported
              }
            };
            d->async_wait(stream_descriptor::wait_read, reader{&*d, &calls});
            armed_first = true;
          } catch (const std::bad_alloc&) {
          }
          if (armed_first) {
            p.send();
            CHECK(eventually([&] { return calls.load() + reports.out_of_memory() >= 1; }));
            p.send();
            CHECK(eventually([&] { return calls.load() + reports.out_of_memory() == 2; }));
          }
        }
        if (d) {
          // Closed on its own io_context: a descriptor object is not thread-safe.
          pools::wait_group closed(1);
          boost::asio::post(d->get_executor(), [&] {
            d->close();
            closed.done();
          });
          CHECK(closed.wait_for(pt::fault_patience));
        }
      }
      pt::check_still_works(pool);
    }
    CHECK(reports.other() == 0);
    if (armed_first) CHECK(calls.load() + reports.out_of_memory() == 2);
  });
}
