// SPDX-License-Identifier: MIT
// box_office.hpp — exercise 07-replay-schedule, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_07-replay-schedule_cheat_ proves the check fails it.
//
// THE CHEAT: the wrong fix the simulator cannot see. It checks under the lock and takes the seat
// right after the unlock(), with no co_await between them, then pays. A coroutine is switched only
// at a co_await, so on pools::sim the check and the take run as one step and no seed oversells
// the show. On the real pool `sold` is written outside the lock that guards it while another
// buyer reads it under that lock: a data race, which the grader's tsan build reports (part 1).
#pragma once

#include <pools/coroutines/async_mutex.hpp>
#include <pools/coroutines/channel.hpp>
#include <pools/coroutines/task.hpp>

#include <cstddef>

namespace exercise {

struct box_office {
  explicit box_office(int seats_, std::size_t buyers) : seats(seats_), payments(buyers) {}
  const int seats;
  int sold = 0;                              // guarded by `lock`
  pools::coroutines::async_mutex lock;       // guards `sold`
  pools::coroutines::channel<int> payments;  // one order per seat sold: the buyer's number
};

template <class Pool>
pools::coroutines::task<void> buy(Pool& /*pool*/, box_office& office, int buyer) {
  co_await office.lock.lock();
  const bool seat_left = office.sold < office.seats;
  office.lock.unlock();
  if (!seat_left) co_return;
  ++office.sold;  // "nothing is awaited since the check": no other buyer can run in between
  co_await office.payments.send(buyer);
}

}  // namespace exercise
