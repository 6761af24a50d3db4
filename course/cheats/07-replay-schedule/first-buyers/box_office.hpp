// SPDX-License-Identifier: MIT
// box_office.hpp — exercise 07-replay-schedule, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_07-replay-schedule_cheat_ proves the check fails it.
//
// THE CHEAT: no race to fix if only "the first two buyers" ever buy. A check that always ran one
// show of 2 seats for buyers 0, 1 and 2 passed it on every schedule. The check now draws each
// show's seats and its buyers' numbers from the seed, so letting buyers in by their number sells
// the wrong count of seats.
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
  if (buyer >= office.seats) co_return;  // buyers 0 .. seats-1 get the seats
  co_await office.lock.lock();
  ++office.sold;
  office.lock.unlock();
  co_await office.payments.send(buyer);
}

}  // namespace exercise
