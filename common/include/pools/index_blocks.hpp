// SPDX-License-Identifier: MIT
// pools/index_blocks.hpp — split an integer range [first, last) into near-equal blocks.
//
// Shared by pools::parallel_for and every variant's loop helpers, so all of them agree on the
// edge cases: an empty or reversed range (last <= first) has no blocks; a range of any signed or
// unsigned integer type works, including one that spans the whole type (the length is computed
// in the unsigned type, where wrap-around is defined); never more blocks than indices. The
// remainder is spread one index each over the first blocks, as BS::thread_pool does, so block
// sizes differ by at most one.
#pragma once

#include <algorithm>
#include <cassert>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace pools {

template <std::integral I>
class index_blocks {
  using U = std::make_unsigned_t<I>;

 public:
  index_blocks(I first, I last, std::size_t blocks) : first_(first) {
    size_ = last > first ? static_cast<U>(static_cast<U>(last) - static_cast<U>(first)) : U{0};
    count_ = static_cast<std::size_t>(
        std::min<std::common_type_t<U, std::size_t>>(size_, std::max<std::size_t>(blocks, 1)));
    if (count_ != 0) {
      per_block_ = static_cast<U>(size_ / count_);
      remainder_ = static_cast<U>(size_ % count_);
    }
  }

  /// How many indices the range holds (0 for empty or reversed ranges).
  U size() const noexcept { return size_; }
  /// How many blocks there are: min(requested, size()), at least 1 unless the range is empty.
  std::size_t count() const noexcept { return count_; }

  /// Block k as a half-open range [begin, end).
  std::pair<I, I> operator[](std::size_t k) const noexcept {
    assert(k < count_);
    const U kk = static_cast<U>(k);
    const U begin = static_cast<U>(kk * per_block_ + std::min(kk, remainder_));
    const U length = static_cast<U>(per_block_ + (kk < remainder_ ? 1 : 0));
    // Conversion back to I is modular in C++20, so this is exact for signed I as well.
    return {static_cast<I>(static_cast<U>(first_) + begin),
            static_cast<I>(static_cast<U>(first_) + begin + length)};
  }

 private:
  I first_;
  U size_ = 0;
  std::size_t count_ = 0;
  U per_block_ = 0;
  U remainder_ = 0;
};

}  // namespace pools
