// SPDX-License-Identifier: MIT
// pools/coroutines/detail/linked_stop_source.hpp — a stop source that also stops when a parent
// token does: pools/detail/linked_stop_source.hpp, shared with the fibers variant.
#pragma once

#include <pools/detail/linked_stop_source.hpp>

namespace pools::coroutines::detail {

using pools::detail::linked_stop_source;

}  // namespace pools::coroutines::detail
