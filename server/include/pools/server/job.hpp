// SPDX-License-Identifier: MIT
// pools/server/job.hpp — the work a request asks of the driver.
//
// The core answers most requests itself, at once. Three endpoints need what only a concurrency
// model can give, so the connection hands them to the driver as a job, and the driver runs it in
// its own style and reports back with connection::complete():
//
//   fib    compute fib(arg) with the variant's fork-join; complete(job, fib(arg)). The core
//          checks the value and answers 500 if it is wrong, so a broken fork-join is seen.
//   busy   spin for arg milliseconds on a worker (pools::server::busy_wait); complete(job).
//   sleep  wait arg milliseconds *without holding a thread* where the model can (a timer, a
//          suspended fiber or coroutine); a model that cannot blocks a worker; complete(job).
//   respond  nothing to compute: the response is already built. Only drivers whose program sets
//          every_request_is_a_job get these (the worker model, where every request makes a
//          round trip through the pool); complete(job) from the pool task.
//
// Every job carries a stop token that fires when its client has gone (connection.hpp, "The client
// leaving"): busy stops spinning, sleep stops waiting, and the driver completes the job early. Its
// response is never written, so what the job returns then does not matter.
#pragma once

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string_view>

namespace pools::server {

struct job {
  enum class kind : std::uint8_t { fib, busy, sleep, respond };
  kind what = kind::respond;
  std::uint64_t arg = 0;     ///< fib: n; busy and sleep: milliseconds; respond: 0
  std::uint64_t ticket = 0;  ///< which response it fills: opaque to the driver, pass the job back
  std::stop_token stop;      ///< stopped when the client has gone: end the work early

  std::chrono::milliseconds duration() const { return std::chrono::milliseconds(arg); }
};

std::string_view to_string(job::kind k) noexcept;

}  // namespace pools::server
