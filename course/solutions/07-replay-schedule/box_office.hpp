// SPDX-License-Identifier: MIT
// box_office.hpp — exercise 07-replay-schedule, reference solution (docs/course/07-replay-schedule.md).
//
// The bug: the check ("a seat is left") and the act ("take it") were two critical sections with
// a suspension point between them (the payment's send). Two buyers could both pass the check for
// the last seat before either took it:
//   buyer 1: lock, sold 1 < 2 seats, unlock, send(...)      -- a point where others may run
//   buyer 2: lock, sold 1 < 2 seats, unlock, send(...), lock, sold = 2, unlock
//   buyer 1:                                                 lock, sold = 3, unlock: oversold
// The fix: check and take in one critical section (reserve the seat), then pay.
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
  // Check and take under one lock: nobody can take the same seat between the two.
  co_await office.lock.lock();
  const bool got_seat = office.sold < office.seats;
  if (got_seat) ++office.sold;
  office.lock.unlock();
  if (!got_seat) co_return;

  co_await office.payments.send(buyer);  // pay for the seat already ours
}

}  // namespace exercise
