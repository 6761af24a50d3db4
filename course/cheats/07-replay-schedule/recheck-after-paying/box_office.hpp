// SPDX-License-Identifier: MIT
// box_office.hpp — exercise 07-replay-schedule, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_07-replay-schedule_cheat_ proves the check fails it.
//
// THE CHEAT: never oversell by checking again after paying, and not taking the seat if it is gone
// by then. The show is never oversold, and the buyer who lost the race has paid for nothing. A
// check of `sold` alone would pass it; the check counts the payments on the desk's channel too.
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

  co_await office.payments.send(buyer);

  co_await office.lock.lock();
  if (office.sold < office.seats) ++office.sold;  // "never oversell": look again before taking it
  office.lock.unlock();
}

}  // namespace exercise
