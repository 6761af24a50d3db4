// SPDX-License-Identifier: MIT
// BS_thread_pool.hpp — test-only forwarding header. BS::thread_pool's own test program includes
// "BS_thread_pool.hpp"; this directory is on that one program's include path (and no other
// target's), so the test runs against pools::futures through the project's alias header instead
// of BS's header. It is not an installed header: applications include <pools/futures/bs_compat.hpp>.
#pragma once

#include <pools/futures/bs_compat.hpp>
