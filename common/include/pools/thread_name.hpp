// SPDX-License-Identifier: MIT
// pools/thread_name.hpp — names a pool's thread ("fibers-0", "reactor-1") for debuggers, top -H
// and perf: a debugging aid, nothing depends on it.
//
// The seam: pthread_setname_np is not POSIX, and its signature differs between systems (Linux and
// FreeBSD name any thread, macOS only the calling one). On Linux it is called; in the portable
// build (POOLS_PORTABLE, and every other system) the threads keep their default names.
#pragma once

#include <string>
#include <thread>

#if defined(__linux__) && !defined(POOLS_PORTABLE)
#include <pthread.h>
#endif

namespace pools {

/// Names thread `t`; Linux keeps at most 15 characters of `name`.
inline void name_thread([[maybe_unused]] std::thread& t, [[maybe_unused]] const std::string& name) {
#if defined(__linux__) && !defined(POOLS_PORTABLE)
  pthread_setname_np(t.native_handle(), name.substr(0, 15).c_str());
#endif
}

}  // namespace pools
