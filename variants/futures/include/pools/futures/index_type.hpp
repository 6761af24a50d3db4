// SPDX-License-Identifier: MIT
// pools/futures/index_type.hpp — the index type of a loop whose two bounds have different
// integer types (BS::common_index_type's rule).
//
// std::common_type is the wrong tool here: for int and unsigned it is unsigned, so a loop from
// -5 to 10u would convert -5 to 4,294,967,291 and run no iteration at all. A loop index must hold
// every value of both bounds, so the rule is:
//
//   * both signed, or both unsigned: the wider of the two (an index never needs more);
//   * one signed, one unsigned: a signed type that holds both ranges. If the signed type is
//     already wider than the unsigned one, it is that type; otherwise it is the signed type twice
//     as wide as the unsigned one (int8 + uint8 -> int16, int32 + uint32 -> int64);
//   * an unsigned 64-bit bound has no wider signed type to go to, so the index is std::uint64_t:
//     the usual case is `0 .. v.size()`, which is right; a negative first bound then wraps, as
//     with std::common_type (cast the bounds yourself for that case).
//
// Written against the same table as BS::thread_pool's test (its check_common_index_type), so
// code moved from BS::thread_pool loops over the same indices.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace pools::futures {

namespace detail {
template <std::size_t Bytes>
struct signed_of_size;  // no signed integer of that size: the rule never asks for one
template <>
struct signed_of_size<2> {
  using type = std::int16_t;
};
template <>
struct signed_of_size<4> {
  using type = std::int32_t;
};
template <>
struct signed_of_size<8> {
  using type = std::int64_t;
};

template <class A, class B>
using wider_t = std::conditional_t<(sizeof(A) >= sizeof(B)), A, B>;

// S signed, U unsigned. Two specialisations rather than one std::conditional_t, which would
// name signed_of_size<16> for a 64-bit U.
template <class S, class U>
struct mixed_index_type;
template <class S, class U>
  requires(sizeof(U) >= 8)
struct mixed_index_type<S, U> {
  using type = std::uint64_t;
};
template <class S, class U>
  requires(sizeof(U) < 8)
struct mixed_index_type<S, U> {
  using type = std::conditional_t<(sizeof(S) > sizeof(U)), S, typename signed_of_size<2 * sizeof(U)>::type>;
};
}  // namespace detail

/// The loop index type for bounds of types A and B (see the rule above).
template <std::integral A, std::integral B>
struct common_index_type {
  using type = std::conditional_t<
      std::is_signed_v<A> == std::is_signed_v<B>, detail::wider_t<A, B>,
      typename detail::mixed_index_type<std::conditional_t<std::is_signed_v<A>, A, B>,
                                        std::conditional_t<std::is_signed_v<A>, B, A>>::type>;
};

template <std::integral A, std::integral B>
using common_index_type_t = typename common_index_type<A, B>::type;

}  // namespace pools::futures
