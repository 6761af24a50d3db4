// SPDX-License-Identifier: MIT
// hidden_tests.hpp — exercise 05's hidden workload (INSTRUCTOR ONLY: course/instructor/ is left out
// of the hand-out). The graders build the check with this folder on the include path
// (cmake/course.cmake), so a class is graded on a workload the students did not tune for; a
// student's own run says the test exists and what it is worth (rubric.json, "hidden": true).
//
// The workload: a channel of capacity 1, many more senders than receivers (24 producer fibers, 3
// consumer fibers) on a 3-thread pool. Most of the time nearly every producer waits in send() on a
// full channel, so each recv() must wake a waiting sender, and the three threads must keep running
// the consumers meanwhile: a send() that blocks its thread stops the whole pool.
// Included by check.cpp after its helpers: it uses item, received, consume, make_counts, verify and
// abandoned_a_pool.
#pragma once

namespace {

void hidden_tests(course::report& report) {
  report.test("hidden: capacity 1, many senders and few receivers on 3 threads");
  constexpr int producers = 24, consumers = 3, per_producer = 500;
  constexpr auto limit = 10s;
  // On the heap, and released if the pool is stuck: its stuck fibers still use them.
  auto ch = std::make_unique<bounded_channel<item>>(1);
  auto r = std::make_unique<received>(producers, consumers);
  r->counts = make_counts(producers, per_producer);
  auto producers_left = std::make_unique<std::atomic<int>>(producers);
  auto consumers_left = std::make_unique<std::atomic<int>>(consumers);
  auto done = std::make_unique<std::promise<void>>();
  std::future<void> finished = done->get_future();
  auto pool = std::make_unique<pools::fibers::thread_pool>(3);
  // Producers first: they fill the channel and wait before any consumer runs.
  for (int i = 0; i < producers; ++i) {
    pool->post([&ch = *ch, &left = *producers_left, i] {
      for (int s = 0; s < per_producer; ++s) ch.send(item{i, s});
      if (left.fetch_sub(1) == 1) ch.close();
    });
  }
  for (int i = 0; i < consumers; ++i) {
    pool->post([&ch = *ch, &r = *r, &left = *consumers_left, &done = *done, i] {
      consume(ch, r, i);
      if (left.fetch_sub(1) == 1) done.set_value();
    });
  }
  if (finished.wait_for(limit) != std::future_status::ready) {
    report.require(false, "capacity 1, 24 producers and 3 consumers on 3 threads: not finished after " +
                              std::to_string(limit.count()) + " s, " + std::to_string(r->total.load()) +
                              " values received: a fiber that waits blocks its thread");
    (void)pool.release();  // abandoned on purpose, as in fibers_part
    (void)ch.release();
    (void)r.release();
    (void)producers_left.release();
    (void)consumers_left.release();
    (void)done.release();
    abandoned_a_pool = true;
    return;
  }
  {
    course::deadline drain("destroying the pool after the hidden workload", 20s,
                           "a fiber still waits in the channel (a waiter no one notified?)");
    pool.reset();
  }
  const std::string bad = verify(*r, per_producer);
  report.require(bad.empty(),
                 "capacity 1, 24 producers and 3 consumers on 3 threads: every value received once, "
                 "in the order sent" +
                     (bad.empty() ? std::string() : ": " + bad));
}

}  // namespace
