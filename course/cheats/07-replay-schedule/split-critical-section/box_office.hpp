// SPDX-License-Identifier: MIT
// box_office.hpp — exercise 07-replay-schedule, A CHEAT (course/cheats/: instructor-only, left out
// of the hand-out). ctest -R exercise_07-replay-schedule_cheat_ proves the check fails it.
//
// THE CHEAT: the wrong fix that looks right. It moves the payment after taking the seat, so no
// co_await separates the check from the take any more, but keeps them in two critical sections
// back to back: between the first unlock() and the second lock() another buyer can take the
// lock, pass the same check and take the same last seat. On the real pool that window is a few
// instructions wide and a thousand shows rarely hit it. pools::sim makes every co_await on a
// primitive (the second lock() here) a scheduling point taken before the operation, so a seed
// runs another buyer in that window and the show is oversold.
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

  co_await office.lock.lock();  // nothing awaited since the check: "still true"
  ++office.sold;
  office.lock.unlock();

  co_await office.payments.send(buyer);
}

}  // namespace exercise
